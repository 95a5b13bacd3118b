/**
 * The subagents' conversations, kept in the store (`task!<sessionId>!<n>`) when each ends, so the
 * user can read what a `task` call did beyond the lines its tool call shows: `/tasks` lists them,
 * `/tasks N` shows one.
 */
import type { SubagentTranscript } from "../agent/subagent.js";
import type { Logger } from "../log/log.js";
import type { Store } from "../store/store.js";
import { keyspace } from "../store/keyspace.js";

export const taskKeys = {
  task: (sessionId: string, n: number) => keyspace.task.key(sessionId, n),
  sessionPrefix: (sessionId: string) => keyspace.task.range(sessionId),
};

/** A message's text in the shown transcript; tool output is long, so each is cut. */
const SHOWN_CHARS = 2000;

const clipped = (s: string): string => (s.length <= SHOWN_CHARS ? s : `${s.slice(0, SHOWN_CHARS)}… [${s.length - SHOWN_CHARS} more characters]`);

export class TaskTranscripts {
  private next: number | undefined;
  /** Writes in order, and `show` after the last of them. */
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly sessionId: string,
    private readonly log: Logger,
  ) {}

  keep(t: SubagentTranscript): void {
    this.pending = this.pending
      .then(async () => {
        this.next ??= (await this.all()).length + 1;
        const n = this.next++;
        await this.store.batch([{ type: "put", key: taskKeys.task(this.sessionId, n), value: t }], false);
      })
      .catch((err: unknown) => this.log.warn({ err }, "keeping a subagent's transcript failed"));
  }

  /** `/tasks`: the list; `/tasks N`: one transcript. */
  async show(arg: string): Promise<string> {
    await this.pending;
    const all = await this.all();
    if (all.length === 0) return "No subagent has run in this session.";
    if (!arg.trim()) {
      return [
        "**Subagents** (`/tasks N` shows one)",
        ...all.map((t, i) => `- ${i + 1} — ${t.startedAt} — ${t.stopReason}, ${t.steps} steps — ${t.prompt.replace(/\s+/g, " ").slice(0, 80)}`),
      ].join("\n");
    }
    const n = Number(arg.trim());
    const t = Number.isInteger(n) ? all[n - 1] : undefined;
    if (!t) return `No subagent ${arg.trim()}; there ${all.length === 1 ? "is 1" : `are ${all.length}`} (\`/tasks\` lists them).`;
    const lines = [`**Subagent ${n}** — ${t.startedAt} — ${t.stopReason}, ${t.steps} steps`];
    for (const m of t.messages.slice(1)) {
      if (m.role === "assistant") {
        if (m.content) lines.push(`\n**assistant:** ${clipped(m.content)}`);
        for (const c of m.tool_calls ?? []) lines.push(`\n**tool call** \`${c.function.name}\` ${clipped(c.function.arguments)}`);
      } else if (m.role === "tool") lines.push(`\n**result:**\n${clipped(m.content ?? "")}`);
      else lines.push(`\n**${m.role}:** ${clipped(m.content ?? "")}`);
    }
    return lines.join("\n");
  }

  private async all(): Promise<SubagentTranscript[]> {
    return (await this.store.range<SubagentTranscript>(taskKeys.sessionPrefix(this.sessionId))).map((e) => e.value);
  }
}
