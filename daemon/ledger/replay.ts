/**
 * session/load's replay: the whole ledger to one window, paced to what the window takes, with the
 * entries the store lost or cannot read named in a warning instead of passing in silence.
 */
import { keys, type Store } from "../store/store.js";
import type { ClientPort } from "../windows/port.js";
import type { LedgerEntry } from "./types.js";
import { randomUUID } from "node:crypto";
import { updatesOf } from "./ledger-join.js";
import { LedgerMessageIds } from "./message-ids.js";

const REPLAY_HIGH_WATER = 1024 * 1024;
/** Ledger records read at once: at most 64 KiB of chunks each, so a page stays a few MiB however long the session. */
const REPLAY_PAGE = 256;

const span = ([a, b]: [number, number]): string => (a === b ? `${a}` : `${a}–${b}`);

/** The ledger as the replay reads it (`SessionState`): what is buffered flushed first, then pages from the store. */
export interface LedgerSource {
  readonly id: string;
  readonly record: { readonly lastSeq: number };
  flush(): Promise<void>;
  ledgerFrom(fromSeq: number, limit?: number): Promise<Array<{ key: string; value: LedgerEntry }>>;
}

export async function replayLedger(state: LedgerSource, store: Store, port: ClientPort): Promise<void> {
  const id = state.id;
  let sent = 0;
  const missing: Array<[number, number]> = [];
  const ids = new LedgerMessageIds(id);
  for (;;) {
    await state.flush();
    let entries = await state.ledgerFrom(sent + 1, REPLAY_PAGE);
    // Damaged values are left out of a page: one of nothing else reads as empty, so read on without a limit.
    if (entries.length === 0 && sent < state.record.lastSeq) entries = await state.ledgerFrom(sent + 1);
    let progressed = false;
    for (const { value } of entries) {
      if (value.seq <= sent) continue;
      if (value.seq > sent + 1) missing.push([sent + 1, value.seq - 1]);
      sent = value.seq;
      progressed = true;
      const messageId = ids.next(value.seq, value.type === "update" ? value.update : undefined);
      if (value.type !== "update") continue;
      // A record holds up to 64 KiB of chunks: the pace is kept per update, not per record.
      for (const update of updatesOf(value, messageId)) {
        if (!port.closed) port.sendUpdate(id, update);
        // A long history goes out at the pace the window takes it, not all into memory at once.
        while (port.backlog() > REPLAY_HIGH_WATER && !port.closed) await new Promise((r) => setTimeout(r, 2));
      }
    }
    // Caught up, or the store holds no more than this (a failed write memory has not reloaded from).
    if (sent >= state.record.lastSeq || !progressed) break;
  }
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
