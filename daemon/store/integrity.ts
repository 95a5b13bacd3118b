/**
 * LevelDB drops records it cannot read while recovering its log and says so only in its own LOG
 * file. Ledgers and histories are numbered without gaps, so a hole in a sequence, a record that
 * promises more than is there, or entries whose session record is gone show what was lost. The scan
 * reads keys only (plus the session records) and records what it finds as store damage.
 */
import { keys, sessionOfKey, type Store } from "./store.js";

export interface ScanResult {
  sessions: number;
  keys: number;
  damaged: number;
}

/** Numbers at the end of keys `<kind>!<id>!<n>`, grouped by session. */
async function numbersBySession(store: Store, kind: string): Promise<{ map: Map<string, number[]>; count: number }> {
  const map = new Map<string, number[]>();
  const found = await store.keysOf(`${kind}!`);
  for (const key of found) {
    const id = sessionOfKey(key);
    const n = Number(key.slice(key.lastIndexOf("!") + 1));
    if (!id || !Number.isInteger(n)) continue;
    let list = map.get(id);
    if (!list) map.set(id, (list = []));
    list.push(n);
  }
  return { map, count: found.length };
}

/** The runs of numbers missing from `first..` up to the largest present (the list is sorted). */
export function holes(sorted: number[], first: number, last = sorted.at(-1) ?? first - 1): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let expect = first;
  for (const n of sorted) {
    if (n > expect) out.push([expect, n - 1]);
    expect = Math.max(expect, n + 1);
  }
  if (last >= expect) out.push([expect, last]);
  return out;
}

const span = ([a, b]: [number, number]): string => (a === b ? `${a}` : `${a}–${b}`);

export async function scanStore(store: Store): Promise<ScanResult> {
  const before = store.health().damage.length;
  const records = await store.range<{ id?: string; lastSeq?: number; historyLength?: number }>(keys.sessionPrefix);
  const recordIds = new Set(records.map((r) => r.key.slice(keys.sessionPrefix.length)));
  const events = await numbersBySession(store, "event");
  const history = await numbersBySession(store, "history");

  for (const { key, value } of records) {
    const id = key.slice(keys.sessionPrefix.length);
    const seqs = events.map.get(id) ?? [];
    // Events are written before the record that counts them, so only a shortfall is damage.
    const lastSeq = Math.max(value.lastSeq ?? 0, seqs.at(-1) ?? 0);
    const missing = holes(seqs, 1, lastSeq);
    if (missing.length > 0) store.noteDamage(keys.eventPrefix(id), `ledger entries missing: ${missing.map(span).join(", ")}`, id);
    const messages = history.map.get(id) ?? [];
    const lastMessage = Math.max((value.historyLength ?? 0) - 1, messages.at(-1) ?? -1);
    const gone = holes(messages, 0, lastMessage);
    if (gone.length > 0) store.noteDamage(keys.historyPrefix(id), `conversation messages missing: ${gone.map(span).join(", ")}`, id);
  }
  for (const id of new Set([...events.map.keys(), ...history.map.keys()])) {
    if (!recordIds.has(id)) store.noteDamage(keys.session(id), "the session's record is missing; its ledger is still stored", id);
  }
  return {
    sessions: records.length,
    keys: records.length + events.count + history.count,
    damaged: store.health().damage.length - before,
  };
}
