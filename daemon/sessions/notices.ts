/**
 * Start notices: what the user must hear about how a session was set up — an instruction file,
 * command folder or plugin left out because it links outside, and any other such fact a part of
 * the daemon finds while the session goes live. Any part adds a line (`session.notices.add`) before
 * the reply that attaches the window; the lines are said once, as one agent message recorded in the
 * ledger like any update (so a later session/load replays it), right after the session/new or
 * session/resume reply, or at the end of session/load's replay (acp/session-lifecycle.ts). A turn
 * says what it finds (an MCP server that failed or came late) in the same shape (`noticeUpdate`).
 */
import type { SessionUpdate } from "./types.js";

export class StartNotices {
  private pending: string[] = [];

  /** Queues lines for the user; a line already waiting is not queued twice. */
  add(...lines: string[]): void {
    for (const line of lines) if (!this.pending.includes(line)) this.pending.push(line);
  }

  /**
   * The waiting lines as one update, and none waiting after; undefined when there are none. A blank
   * line ends it: the first answer after it is, in most windows, appended to the same message (acpx
   * showed "…(to /etc).Hello").
   */
  take(): SessionUpdate | undefined {
    const update = noticeUpdate(this.pending, "\n\n");
    this.pending = [];
    return update;
  }
}

/**
 * Lines for the user as one agent message marked a notice (a turn's, or a start's); undefined for
 * none. `end` follows the last line: a turn's notice comes before the model's words, which most
 * windows append to the same message.
 */
export function noticeUpdate(lines: readonly string[], end = ""): SessionUpdate | undefined {
  if (lines.length === 0) return undefined;
  const text = `${lines.map((line) => `[notice] ${line}`).join("\n")}${end}`;
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { "reasonix.io": { kind: "notice" } } };
}
