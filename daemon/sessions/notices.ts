/**
 * Start notices: what the user must hear about how a session was set up — an instruction file,
 * command folder or plugin left out because it links outside, and any other such fact a part of
 * the daemon finds while the session goes live. Any part adds a line (`session.notices.add`) before
 * the reply that attaches the window; the lines are said once, as one agent message recorded in the
 * ledger like any update (so a later session/load replays it), right after the session/new or
 * session/resume reply, or at the end of session/load's replay (acp/session-lifecycle.ts).
 */
import type { SessionUpdate } from "./types.js";

export class StartNotices {
  private pending: string[] = [];

  /** Queues lines for the user; a line already waiting is not queued twice. */
  add(...lines: string[]): void {
    for (const line of lines) if (!this.pending.includes(line)) this.pending.push(line);
  }

  /** The waiting lines as one update, and none waiting after; undefined when there are none. */
  take(): SessionUpdate | undefined {
    if (this.pending.length === 0) return undefined;
    const text = this.pending.map((line) => `[notice] ${line}`).join("\n");
    this.pending = [];
    return { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { "reasonix.io": { kind: "notice" } } };
  }
}
