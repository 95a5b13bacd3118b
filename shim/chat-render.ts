/**
 * Session updates as a person reads them in a terminal: message text as it streams, thoughts dimmed
 * (or marked, without colour), one line per tool call with its status and a short preview of its
 * diff or output, plans as a checklist, usage and cost after each turn. Never raw JSON. In a pipe
 * there is no colour and every piece starts on a line of its own.
 */
type Update = Record<string, unknown> & { sessionUpdate?: string };

interface Style {
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
}

const ansi: Style = {
  dim: (s) => `\x1b[2m${s}\x1b[22m`,
  bold: (s) => `\x1b[1m${s}\x1b[22m`,
  red: (s) => `\x1b[31m${s}\x1b[39m`,
  green: (s) => `\x1b[32m${s}\x1b[39m`,
};
const plain: Style = { dim: (s) => s, bold: (s) => s, red: (s) => s, green: (s) => s };

const PREVIEW_LINES = 6;

export function countLines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** Lines added and removed between two texts, counted by a longest-common-subsequence of lines. */
export function diffStat(oldText: string | null | undefined, newText: string): { added: number; removed: number } {
  const a = oldText ? oldText.replace(/\n$/, "").split("\n") : [];
  const b = newText ? newText.replace(/\n$/, "").split("\n") : [];
  if (a.length * b.length > 4_000_000) return { added: b.length, removed: a.length };
  const row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let prev = 0;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j]!;
      row[j] = a[i - 1] === b[j - 1] ? prev + 1 : Math.max(row[j]!, row[j - 1]!);
      prev = keep;
    }
  }
  const common = row[b.length]!;
  return { added: b.length - common, removed: a.length - common };
}

function textOf(content: unknown): string {
  const c = content as { type?: string; text?: string; content?: { type?: string; text?: string } } | undefined;
  if (c?.type === "text") return c.text ?? "";
  if (c?.type === "content") return c.content?.type === "text" ? (c.content.text ?? "") : "";
  return "";
}

function preview(text: string, style: Style): string[] {
  const lines = text.replace(/\s+$/, "").split("\n");
  const shown = lines.slice(0, PREVIEW_LINES).map((l) => style.dim(`    ${l.length > 160 ? `${l.slice(0, 159)}…` : l}`));
  if (lines.length > PREVIEW_LINES) shown.push(style.dim(`    … ${lines.length - PREVIEW_LINES} more lines`));
  return shown;
}

interface ToolState {
  title: string;
  kind: string;
  status: string;
}

export class Renderer {
  private readonly style: Style;
  private readonly tools = new Map<string, ToolState>();
  /** What is on the current line: streamed text or thought, or nothing (at the start of a line). */
  private open: "message" | "thought" | undefined;

  constructor(
    private readonly write: (text: string) => void,
    readonly color: boolean,
  ) {
    this.style = color ? ansi : plain;
  }

  /** Ends a streamed piece so the next one starts on a line of its own. */
  lineBreak(): void {
    if (this.open) this.write("\n");
    this.open = undefined;
  }

  private line(text: string): void {
    this.lineBreak();
    this.write(`${text}\n`);
  }

  info(text: string): void {
    this.line(this.style.dim(text));
  }

  error(text: string): void {
    this.line(this.style.red(text));
  }

  /** The end of a turn: how it ended, with its usage. */
  turnEnded(stopReason: string, usage: string | undefined): void {
    const tail = stopReason === "end_turn" ? "" : ` (${stopReason.replace(/_/g, " ")})`;
    if (usage || tail) this.line(this.style.dim(`${usage ?? ""}${tail}`.trim()));
    else this.lineBreak();
  }

  update(u: Update): void {
    const s = this.style;
    switch (u.sessionUpdate) {
      case "agent_message_chunk": {
        const text = textOf(u.content);
        if (!text) return;
        if (this.open === "thought") this.lineBreak();
        this.open = "message";
        this.write(text);
        return;
      }
      case "agent_thought_chunk": {
        const text = textOf(u.content);
        if (!text) return;
        if (this.open !== "thought") {
          this.lineBreak();
          this.write(this.color ? "" : "(thinking) ");
        }
        this.open = "thought";
        this.write(s.dim(text));
        return;
      }
      case "user_message_chunk": {
        const text = textOf(u.content);
        if (text) this.line(s.bold(`> ${text.replace(/\n/g, "\n  ")}`));
        return;
      }
      case "tool_call":
      case "tool_call_update":
        this.tool(u);
        return;
      case "plan": {
        const entries = (u.entries as Array<{ content?: string; status?: string }> | undefined) ?? [];
        this.line(s.bold("Plan"));
        for (const e of entries) {
          const mark = e.status === "completed" ? "[x]" : e.status === "in_progress" ? "[~]" : "[ ]";
          this.write(`  ${mark} ${e.content ?? ""}\n`);
        }
        return;
      }
      case "current_mode_update":
        this.info(`mode: ${String(u.currentModeId)}`);
        return;
      default:
        // usage_update is summed up at the end of the turn; titles, the slash menu and config echoes
        // are for editors' pickers, not for the transcript.
        return;
    }
  }

  private tool(u: Update): void {
    const s = this.style;
    const id = String(u.toolCallId ?? "");
    const known = this.tools.get(id);
    const state: ToolState = {
      title: typeof u.title === "string" ? u.title : (known?.title ?? "tool"),
      kind: typeof u.kind === "string" ? u.kind : (known?.kind ?? "other"),
      status: typeof u.status === "string" ? u.status : (known?.status ?? "pending"),
    };
    this.tools.set(id, state);
    if (u.sessionUpdate === "tool_call") {
      this.line(`${s.dim("•")} ${state.title}`);
      return;
    }
    if (state.status !== "completed" && state.status !== "failed") return;
    const ok = state.status === "completed";
    const content = (u.content as Array<Record<string, unknown>> | undefined) ?? [];
    const diffs = content.filter((c) => c.type === "diff");
    const summary = diffs
      .map((d) => {
        const { added, removed } = diffStat(d.oldText as string | null | undefined, String(d.newText ?? ""));
        return `+${added} -${removed}`;
      })
      .join(", ");
    this.line(`${ok ? s.green("✓") : s.red("✗")} ${state.title}${summary ? s.dim(` (${summary})`) : ""}`);
    const text = content
      .filter((c) => c.type === "content")
      .map((c) => textOf(c))
      .join("\n");
    if (text.trim()) for (const l of preview(text, s)) this.write(`${l}\n`);
  }
}

/** A line of usage for the end of a turn, from the last usage_update seen. */
export function usageLine(u: Update | undefined): string | undefined {
  if (!u) return undefined;
  const used = typeof u.used === "number" ? u.used : undefined;
  const size = typeof u.size === "number" ? u.size : undefined;
  const cost = u.cost as { amount?: number; currency?: string } | undefined;
  const parts = [
    used !== undefined ? `${used.toLocaleString("en-US")}${size ? ` / ${size.toLocaleString("en-US")}` : ""} tokens` : undefined,
    cost?.amount !== undefined ? `${cost.amount.toFixed(4)} ${cost.currency ?? ""}`.trim() : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : undefined;
}
