/**
 * Message ids (ACP `messageId`): every user, agent and thought chunk a window gets carries the id of
 * the message it belongs to, so clients can tell two messages of one kind apart and de-duplicate
 * what a replay or another window sends again. What a message is:
 *
 * - a prompt's content blocks are one user message (its id travels in the turn's input);
 * - one model round's answer text is one message, its reasoning another (agent/turn.ts);
 * - everything else the daemon says ([notice], [warning], a command's answer, a steer) is a message
 *   of its own: a chunk recorded without an id is given a fresh one here, before it is recorded
 *   and sent, so the ledger keeps the id the windows were sent and a replay sends it again.
 *
 * Ledgers written before ids existed replay with ids derived from where their records are stored:
 * a run of consecutive chunk records of one kind is one message, named after its first record, so
 * two replays (and a fork, which stores the derived id) agree.
 */
import { createHash, randomUUID } from "node:crypto";
import type { SessionUpdate } from "@agentclientprotocol/sdk";

export type ChunkUpdate = Extract<SessionUpdate, { sessionUpdate: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk" }>;

export function isChunk(update: SessionUpdate): update is ChunkUpdate {
  const kind = update.sessionUpdate;
  return kind === "user_message_chunk" || kind === "agent_message_chunk" || kind === "agent_thought_chunk";
}

/**
 * What a window is shown of the conversation, as against reports about it (usage, title, mode):
 * the history position recorded with these says where a fork cut at a message stops the model
 * history (fork.ts).
 */
export function isConversation(update: SessionUpdate): boolean {
  const kind = update.sessionUpdate;
  return isChunk(update) || kind === "tool_call" || kind === "tool_call_update" || kind === "plan";
}

/**
 * Gives a chunk without an id a message of its own, in place (the caller sends this same object to
 * the windows after recording it), and returns it.
 */
export function withMessageId(update: SessionUpdate): SessionUpdate {
  if (isChunk(update) && typeof update.messageId !== "string") update.messageId = randomUUID();
  return update;
}

/** A UUID (version 8, "custom") derived from the session and a record's position: the same every time. */
export function derivedMessageId(sessionId: string, seq: number): string {
  const h = createHash("sha256").update(`reasonix.io/message\0${sessionId}\0${seq}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Ids for the records of a ledger read in order: a record's own, or for a chunk recorded without
 * one, the id of the run of same-kind chunk records it belongs to. Feed it every record (`seq`
 * order, from the first), chunks or not: anything between two chunks ends a run.
 */
export class LedgerMessageIds {
  private run: { kind: string; seq: number; id: string } | undefined;

  constructor(private readonly sessionId: string) {}

  /** The message id of a record's updates; undefined for records that are not chunks. */
  next(seq: number, update: SessionUpdate | undefined): string | undefined {
    if (!update || !isChunk(update)) {
      this.run = undefined;
      return undefined;
    }
    if (typeof update.messageId === "string") {
      this.run = undefined;
      return update.messageId;
    }
    const run = this.run;
    if (run && run.kind === update.sessionUpdate && run.seq === seq - 1) {
      run.seq = seq;
      return run.id;
    }
    this.run = { kind: update.sessionUpdate, seq, id: derivedMessageId(this.sessionId, seq) };
    return this.run.id;
  }
}
