/**
 * LevelDB drops records it cannot read while recovering its log and says so only in its own LOG
 * file. The kinds the keyspace numbers without gaps (keyspace.ts `scan`: the ledger, the
 * conversation) show what was lost: a hole in a sequence, a record that promises more than is
 * there, or entries whose session record is gone. The scan reads keys only (plus the session
 * records) and records what it finds as store damage.
 *
 * It reads the store a page of sessions at a time (their records, then the numbered keys of the ids
 * from the last page's up to this page's last), so a daemon with ten thousand sessions holds one
 * page in memory and can pause between pages: the scan runs beside the sessions it serves, never
 * in front of them.
 */
import { KINDS, type KeyKind, keyspace } from "./keyspace.js";
import { pagesOf } from "./pages.js";
import { pastPrefix, type Store } from "./store.js";

export interface ScanResult {
  sessions: number;
  keys: number;
  damaged: number;
}

/** The kinds the keyspace numbers without holes (the ledger, the conversation). */
const NUMBERED = KINDS.filter((k) => k.scan !== undefined);

/** Keys read at a time: a session with a ledger of 100,000 entries is not held as 100,000 strings. */
const KEY_SLICE = 4096;

/** The numbers at the end of one kind's keys of the ids after `after` up to `upTo` (undefined: the start, the end), by session. */
async function numbersBySession(
  store: Store,
  kind: KeyKind,
  after: string | undefined,
  upTo: string | undefined,
): Promise<{ map: Map<string, number[]>; count: number }> {
  const map = new Map<string, number[]>();
  let count = 0;
  let from = after === undefined ? kind.range() : pastPrefix(kind.range(after));
  const before = upTo === undefined ? pastPrefix(kind.range()) : pastPrefix(kind.range(upTo));
  for (;;) {
    const found = await store.keysOf(kind.range(), { from, before, limit: KEY_SLICE });
    for (const key of found) {
      const id = kind.sessionOf(key);
      const n = Number(kind.parse(key)?.at(-1));
      if (!id || !Number.isInteger(n)) continue;
      let list = map.get(id);
      if (!list) map.set(id, (list = []));
      list.push(n);
    }
    count += found.length;
    if (found.length < KEY_SLICE) return { map, count };
    from = `${found.at(-1)!}\u0000`;
  }
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

interface Finding {
  id: string;
  where: string;
  detail: string;
  /** A hole counts only while the record is there; an orphan only while it is not. */
  withRecord: boolean;
}

export interface ScanPace {
  /** Session records per page; 256 by default. */
  page?: number;
  /** Awaited between pages; false stops the scan where it is (the daemon is stopping). */
  between?: () => Promise<boolean>;
  /** A session being made (a fork before its record is written): its keys are no damage yet. */
  beingMade?: (sessionId: string) => boolean;
}

export async function scanStore(store: Store, pace: ScanPace = {}): Promise<ScanResult> {
  const before = store.health().damage.length;
  const size = pace.page ?? 256;
  const result = { sessions: 0, keys: 0, damaged: 0 };
  const id = (key: string | undefined): string | undefined => (key === undefined ? undefined : key.slice(keyspace.session.range().length));
  for await (const page of pagesOf<Record<string, unknown>>(store, keyspace.session.range(), size)) {
    result.sessions += page.entries.length;
    result.keys += await scanPage(store, page.entries, id(page.after), id(page.upTo), pace.beingMade);
    if (page.upTo === undefined || (pace.between && !(await pace.between()))) break;
  }
  result.damaged = store.health().damage.length - before;
  return result;
}

/** One page: its records against the numbered keys of the ids in (after, upTo]; the keys read. */
async function scanPage(
  store: Store,
  records: Array<{ key: string; value: Record<string, unknown> }>,
  after: string | undefined,
  upTo: string | undefined,
  beingMade: (sessionId: string) => boolean = () => false,
): Promise<number> {
  const recordIds = new Set(records.map((r) => keyspace.session.sessionOf(r.key)));
  const numbered = await Promise.all(NUMBERED.map(async (kind) => ({ kind, scan: kind.scan!, ...(await numbersBySession(store, kind, after, upTo)) })));
  const findings: Finding[] = [];
  for (const { key, value } of records) {
    const id = keyspace.session.sessionOf(key);
    if (!id) continue;
    for (const { kind, scan, map } of numbered) {
      const present = map.get(id) ?? [];
      // Entries are written before the record that counts them, so only a shortfall is damage.
      const counted = typeof value[scan.countedBy] === "number" ? (value[scan.countedBy] as number) : 0;
      const missing = holes(present, scan.first, Math.max(scan.first + counted - 1, present.at(-1) ?? scan.first - 1));
      if (missing.length > 0)
        findings.push({ id, where: kind.range(id), detail: `${scan.entries} missing: ${missing.map(span).join(", ")}`, withRecord: true });
    }
  }
  for (const id of new Set(numbered.flatMap(({ map }) => [...map.keys()]))) {
    if (!recordIds.has(id))
      findings.push({ id, where: keyspace.session.key(id), detail: "the session's record is missing; its ledger is still stored", withRecord: false });
  }
  // Sessions deleted or made while the scan read (a prune, a fork) are no damage: each finding is
  // checked again against the store as it is now.
  if (findings.length === 0) return records.length + numbered.reduce((sum, n) => sum + n.count, 0);
  const removing = new Set((await store.keysOf(keyspace.removal.range())).map((k) => keyspace.removal.sessionOf(k)));
  for (const f of findings) {
    const hasRecord = (await store.get(keyspace.session.key(f.id)).catch(() => undefined)) !== undefined;
    if (removing.has(f.id) || hasRecord !== f.withRecord || beingMade(f.id)) continue;
    store.noteDamage(f.where, f.detail, f.id);
  }
  return records.length + numbered.reduce((sum, n) => sum + n.count, 0);
}
