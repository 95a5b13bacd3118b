/**
 * A stored ledger record's text to the JSON text of the updates it stands for, for session/load.
 * Most records are one update stored as `{"type":"update","update":U,…,"seq":n,"at":"…"}`, written
 * by JSON.stringify (store/codec.ts), and what a window is sent of it is U exactly as stored: so U
 * is cut out of the text instead of parsed and written again, which was half of a long replay's
 * cost. Anything else is parsed: a record of joined chunks (`more`), a chunk stored without its
 * message id (a ledger from before ids: replay derives one), any member this file does not know.
 */
import { encodedUpdatesOf } from "./ledger-join.js";
import type { LedgerMessageIds } from "./message-ids.js";
import type { LedgerEntry } from "./types.js";

const UPDATE_START = '{"type":"update","update":'.length;
const KIND_AT = `${'{"type":"update","update":'}{"sessionUpdate":"`.length;
/** What may follow U in a record of one update: its history position, then its number and time. */
const AFTER_UPDATE = /(?:,"historyAt":\d+)?(?:,"compactions":\d+)?,"seq":\d+,"at":"[^"\\]*"}$/y;
const CHUNK_KINDS = ['user_message_chunk"', 'agent_message_chunk"', 'agent_thought_chunk"'];
const ID_MEMBER = ',"messageId":"';

/** The chunk `update` ends with its own message id (appendLedger adds it last when it was missing). */
function endsWithOwnId(update: string): boolean {
  const at = update.lastIndexOf(ID_MEMBER);
  if (at < 0 || !update.endsWith('"}')) return false;
  // The id's text must hold no quote or escape: then that member is the object's own, not one further in.
  const end = update.length - 2;
  for (let i = at + ID_MEMBER.length; i < end; i++) {
    const c = update.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Where the object opening at `start` closes (the index after its "}"), strings skipped; -1 if it does not. */
function objectEnd(json: string, start: number): number {
  let depth = 0;
  for (let i = start; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      // To the closing quote: one not escaped by an odd run of backslashes.
      for (;;) {
        i = json.indexOf('"', i + 1);
        if (i < 0) return -1;
        let slashes = 0;
        while (json.charCodeAt(i - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
  }
  return -1;
}

/** The text of U when the record is one update that replays as stored; undefined when it must be parsed. */
function storedUpdate(json: string): string | undefined {
  if (!json.startsWith('{"type":"update","update":{"sessionUpdate":"')) return undefined;
  const end = objectEnd(json, UPDATE_START);
  if (end < 0) return undefined;
  // Sticky: matched from `end` on, without cutting the rest out first.
  AFTER_UPDATE.lastIndex = end;
  if (!AFTER_UPDATE.test(json)) return undefined;
  const update = json.slice(UPDATE_START, end);
  if (CHUNK_KINDS.some((k) => json.startsWith(k, KIND_AT)) && !endsWithOwnId(update)) return undefined;
  return update;
}

/**
 * The updates of the record numbered `seq` as JSON text (none for turn markers and decisions),
 * feeding `ids` as replay must: every record, in order.
 */
export function replayTexts(seq: number, json: string, ids: LedgerMessageIds): string[] {
  const update = storedUpdate(json);
  if (update !== undefined) {
    // A chunk with its own id, or no chunk: either way it ends any run of chunks without one.
    ids.next(seq, undefined);
    return [update];
  }
  const value = JSON.parse(json) as LedgerEntry;
  const messageId = ids.next(seq, value.type === "update" ? value.update : undefined);
  return value.type === "update" ? encodedUpdatesOf(value, messageId) : [];
}
