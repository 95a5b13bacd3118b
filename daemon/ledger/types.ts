/** What a session's ledger holds: one record per update or turn marker, numbered in order. */
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";

export type LedgerBody =
  /**
   * `more`: the texts of the chunks of `update`'s kind that streamed right after it, each sent as
   * its own update (see ledger-join.ts); absent when the record holds one update.
   * `historyAt`, on conversation updates (message-ids.ts `isConversation`): how many model history
   * messages there were when it was recorded, and `compactions` how many compactions had rewritten
   * that history (absent: none) — where a fork cut before this update ends the history (fork.ts).
   */
  | { type: "update"; update: SessionUpdate; more?: string[]; historyAt?: number; compactions?: number }
  | { type: "turn_start"; turnId: string }
  | { type: "turn_end"; turnId: string; stopReason?: StopReason; error?: string }
  | { type: "interrupted" }
  | { type: "permission"; toolCallId: string; outcome: string };

export type LedgerEntry = LedgerBody & { seq: number; at: string };
