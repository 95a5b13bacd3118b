/**
 * Streamed text chunks share ledger records. Each record costs the store about as much as the rest
 * of a chunk's path together (encoding, checksum, the batch entry, LevelDB's own work), and a model
 * streams a chunk every few milliseconds per session. So an agent text chunk that follows one of
 * the same kind while that record still waits in the session's write buffer is added to it, as
 * one more text; replay sends each text as its own update again, so a window that loads the
 * session is sent the chunks it would have been sent live, in the same order. Once a buffer goes
 * to the store its records no longer change: the next chunk opens a new record.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { LedgerBody } from "./types.js";

/** A record's texts stay a small value: a long answer streamed at once spans several records. */
const MAX_JOINED_CHARS = 64 * 1024;

type UpdateRecord = Extract<LedgerBody, { type: "update" }>;

/**
 * The text of an agent text chunk that carries nothing else but its message id (annotations or
 * _meta would be lost in a record of texts; the id is the record's).
 */
export function joinableText(update: SessionUpdate): string | undefined {
  if (update.sessionUpdate !== "agent_message_chunk" && update.sessionUpdate !== "agent_thought_chunk") return undefined;
  const content = update.content;
  if (content.type !== "text") return undefined;
  for (const key in update) if (key !== "sessionUpdate" && key !== "content" && key !== "messageId") return undefined;
  for (const key in content) if (key !== "type" && key !== "text") return undefined;
  return content.text;
}

const messageIdOf = (update: SessionUpdate): unknown => (update as { messageId?: unknown }).messageId;

export class ChunkJoiner {
  private open: { record: UpdateRecord; generation: number; chars: number } | undefined;

  /** Adds `update` to the open record when it may (same kind, same write buffer); true when it did. */
  join(update: SessionUpdate, generation: number): boolean {
    const open = this.open;
    if (!open || open.generation !== generation || open.record.update.sessionUpdate !== update.sessionUpdate) return false;
    if (messageIdOf(open.record.update) !== messageIdOf(update)) return false;
    const text = joinableText(update);
    if (text === undefined || open.chars + text.length > MAX_JOINED_CHARS) return false;
    (open.record.more ??= []).push(text);
    open.chars += text.length;
    return true;
  }

  /** The ledger record just buffered (undefined: nothing may join what came before). */
  opened(record: LedgerBody | undefined, generation: number): void {
    const text = record?.type === "update" ? joinableText(record.update) : undefined;
    this.open = text === undefined ? undefined : { record: record as UpdateRecord, generation, chars: text.length };
  }
}

/**
 * Every update a stored record stands for, in the order they were sent, as JSON text, each chunk
 * with the record's message id (`messageId`: the id a record written without one is replayed
 * with). The chunks after the first are made from their texts alone: the text `JSON.stringify`
 * gives of `{sessionUpdate, content: {type: "text", text}, messageId}`, without the objects.
 */
export function encodedUpdatesOf(record: UpdateRecord, messageId?: string): string[] {
  const more = Array.isArray(record.more) ? record.more : [];
  const id = typeof messageIdOf(record.update) === "string" ? undefined : messageId;
  const first = id === undefined ? record.update : { ...record.update, messageId: id };
  const out = [JSON.stringify(first)];
  if (more.length === 0) return out;
  const shared = messageIdOf(first);
  const head = `{"sessionUpdate":${JSON.stringify(record.update.sessionUpdate)},"content":{"type":"text","text":`;
  const tail = typeof shared === "string" ? `},"messageId":${JSON.stringify(shared)}}` : "}}";
  for (const text of more) if (typeof text === "string") out.push(`${head}${JSON.stringify(text)}${tail}`);
  return out;
}
