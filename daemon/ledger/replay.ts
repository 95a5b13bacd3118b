/**
 * session/load's replay: the whole ledger to one window, paced to what the window takes, with the
 * entries the store lost or cannot read named in a warning instead of passing in silence. It
 * streams: a page of records is read while the one before goes out (at most 1,024 records or about
 * 1 MiB each), updates leave in batches of about 64 KiB, one write each, and the replay waits while
 * the window holds more than 1 MiB unread, so the daemon holds a few MiB of it however long the
 * session is. A page is a few milliseconds of work on the event loop; smaller pages cost each
 * record more (the iterator's per-page round trip to its thread).
 */
import { keys, type JsonCursor, type JsonPage, type Store } from "../store/store.js";
import type { ClientPort } from "../windows/port.js";
import { randomUUID } from "node:crypto";
import { LedgerMessageIds } from "./message-ids.js";
import { replayTexts } from "./replay-text.js";

const REPLAY_HIGH_WATER = 1024 * 1024;
const REPLAY_PAGE = 1024;
const REPLAY_PAGE_BYTES = 1024 * 1024;
/** Updates go to the window in batches of about this many characters: one write each (acp/connection.ts). */
const REPLAY_BATCH_CHARS = 64 * 1024;

const span = ([a, b]: [number, number]): string => (a === b ? `${a}` : `${a}–${b}`);

/** The ledger as the replay reads it (`SessionState`): what is buffered flushed first, then pages from the store. */
export interface LedgerSource {
  readonly id: string;
  readonly record: { readonly lastSeq: number };
  flush(): Promise<void>;
  /** Records from `fromSeq` on as their stored JSON text, a page at a time (`Store.jsonCursor`; undefined: damaged). */
  ledgerCursor(fromSeq: number, limit: number, maxBytes: number): Pick<JsonCursor, "next" | "close">;
}

/** A ledger key's record number (`event!<id>!<seq, 12 digits>`). */
const seqOf = (key: string): number => Number(key.slice(-12));

/**
 * `caughtUp` runs at the moment the window has been sent every record, in the same tick as that
 * check: the caller attaches the window there, so an update recorded while the replay winds down
 * (its iterator closing is a round trip to the store's thread) reaches the window live. Attached
 * any later, such an update went to the other windows only (seen: the last chunk of a turn).
 */
export async function replayLedger(state: LedgerSource, store: Store, port: ClientPort, caughtUp: () => void = () => undefined): Promise<void> {
  const id = state.id;
  let sent = 0;
  const missing: Array<[number, number]> = [];
  const ids = new LedgerMessageIds(id);
  let batch: string[] = [];
  let chars = 0;
  // A long history goes out at the pace the window takes it, not all into memory at once.
  const send = async (): Promise<void> => {
    if (batch.length > 0 && !port.closed) port.sendEncodedUpdates(id, batch);
    batch = [];
    chars = 0;
    while (port.backlog() > REPLAY_HIGH_WATER && !port.closed) await new Promise((r) => setTimeout(r, 2));
  };
  const cursor = state.ledgerCursor(1, REPLAY_PAGE, REPLAY_PAGE_BYTES);
  const read = async (): Promise<JsonPage> => {
    await state.flush();
    return cursor.next();
  };
  let next = read();
  let empty = false;
  try {
    for (;;) {
      const page = await next;
      // The next page is read while this one goes out; past the end it reads what a turn wrote meanwhile.
      next = read();
      for (const [key, json] of page) {
        // A damaged value is left out: the hole it leaves is named below.
        if (json === undefined) continue;
        const seq = seqOf(key);
        if (seq <= sent) continue;
        if (seq > sent + 1) missing.push([sent + 1, seq - 1]);
        sent = seq;
        for (const update of replayTexts(seq, json, ids)) {
          batch.push(update);
          chars += update.length;
          if (chars >= REPLAY_BATCH_CHARS) await send();
        }
      }
      await send();
      // Caught up; or the store holds no more than this (a failed write memory has not reloaded
      // from): a second empty read in a row, as the first may have been read ahead before a turn wrote more.
      if (sent >= state.record.lastSeq || (page.length === 0 && empty)) {
        warnOfDamage(store, port, id, missing);
        caughtUp();
        break;
      }
      empty = page.length === 0;
    }
  } finally {
    // The page read ahead is not needed (its failure is not this replay's), but it ends before the iterator closes.
    await next.catch(() => undefined);
    await cursor.close();
  }
}

/** The entries the store lost or cannot read, named in a warning after the history, instead of passing in silence. */
function warnOfDamage(store: Store, port: ClientPort, id: string, missing: Array<[number, number]>): void {
  if (missing.length > 0) store.noteDamage(keys.eventPrefix(id), `ledger entries missing: ${missing.map(span).join(", ")}`, id);
  const own = store.damageOf(id);
  // What LevelDB dropped while recovering names no session: any of them may have lost its latest entries.
  const storeWide = store.health().damage.filter((d) => d.sessionId === undefined);
  if ((own.length === 0 && storeWide.length === 0) || port.closed) return;
  const parts = [
    ...(own.length > 0 ? [`this session's stored history is damaged (${own.map((d) => d.detail).join("; ")})`] : []),
    ...(storeWide.length > 0 ? [`the store lost data while recovering (${storeWide.map((d) => d.detail).join("; ")}), so recent entries may be missing`] : []),
  ];
  const text = `\n\n[warning] ${parts.join("; ")}. Everything that could be read is shown above; \`reasonix daemon status\` lists the damage.`;
  port.sendUpdate(id, { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, messageId: randomUUID() });
}
