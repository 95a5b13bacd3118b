/**
 * `session/list` reads a page from an index kept in the store, newest first, instead of every
 * session record: listing must cost the same with ten sessions or ten thousand.
 *
 *   list!<inverted updatedAt>!<id>                  -> ListEntry, every session with a title
 *   listcwd!<hash of cwd>!<inverted updatedAt>!<id> -> the same, per working directory
 * (store/keyspace.ts declares both). They are written and deleted in the same batch as the record,
 * so the record names the keys its session is indexed under.
 *
 * A session nobody prompted has no title and is not indexed: it is listed from memory while it is
 * live, and not at all after that (an editor's history is not filled with empty sessions).
 */
import { createHash } from "node:crypto";
import type { BatchOp, Store } from "../store/store.js";
import { keys, StoreDamagedError } from "../store/store.js";
import { keyspace } from "../store/keyspace.js";

/** The fields of a session record the index is built from (sessions/types.ts `SessionRecord`). */
export interface Listed {
  id: string;
  cwd: string;
  additionalDirectories: string[];
  title?: string | undefined;
  updatedAt: string;
}

export interface ListEntry {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt: string;
  additionalDirectories?: string[];
}

const LATEST = 9_999_999_999_999;
const INDEX_VERSION_KEY = keyspace.listVersion.key();

// Every commit re-indexes its session, and a daemon serves few folders: a hash each time showed in profiles.
const hashes = new Map<string, string>();

function cwdHash(cwd: string): string {
  let hash = hashes.get(cwd);
  if (hash === undefined) {
    hash = createHash("sha256").update(cwd).digest("hex").slice(0, 24);
    if (hashes.size >= 1024) hashes.clear();
    hashes.set(cwd, hash);
  }
  return hash;
}

export const listPrefix = (cwd: string | undefined): string => (cwd === undefined ? keyspace.list.range() : keyspace.listByCwd.range(cwdHash(cwd)));

/** A session's place in the list and what the list shows of it. */
export interface Listing {
  sortKey: string;
  entry: ListEntry;
}

/**
 * The first `limit` listings in sort order, of `stored` (in order already: read from the index) and
 * of `live` (in any order), in one pass over `live` without sorting it: a window may list again and
 * again while a thousand unprompted sessions are live.
 */
export function firstListings(stored: readonly Listing[], live: Iterable<Listing>, limit: number): Listing[] {
  const first = stored.slice(0, limit);
  for (const l of live) {
    if (first.length === limit && l.sortKey >= first[limit - 1]!.sortKey) continue;
    let lo = 0;
    let hi = first.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (first[mid]!.sortKey < l.sortKey) lo = mid + 1;
      else hi = mid;
    }
    first.splice(lo, 0, l);
    if (first.length > limit) first.pop();
  }
  return first;
}

/** Orders newest first, then by id, as plain byte order of keys. */
export function sortKey(record: Pick<Listed, "updatedAt" | "id">): string {
  const ms = Date.parse(record.updatedAt);
  return `${String(LATEST - (Number.isFinite(ms) ? ms : 0)).padStart(13, "0")}!${record.id}`;
}

export function listEntry(record: Listed): ListEntry {
  return {
    sessionId: record.id,
    cwd: record.cwd,
    ...(record.additionalDirectories.length ? { additionalDirectories: record.additionalDirectories } : {}),
    ...(record.title ? { title: record.title } : {}),
    updatedAt: record.updatedAt,
  };
}

/** The index keys a record is stored under; none for a session without a title. */
export function indexKeys(record: Listed): string[] {
  if (record.title === undefined) return [];
  const k = sortKey(record);
  return [`${listPrefix(undefined)}${k}`, `${listPrefix(record.cwd)}${k}`];
}

/** The index keys the stored record of `id` names: none without a record; undefined when it cannot be read. */
export async function storedIndexKeys(store: Store, id: string): Promise<string[] | undefined> {
  try {
    const record = await store.get<Listed>(keys.session(id));
    return record ? indexKeys(record) : [];
  } catch (err) {
    if (err instanceof StoreDamagedError) return undefined;
    throw err;
  }
}

/** Ops that move a record's index entries from `before` (the keys stored now) to where it belongs. */
export function reindexOps(before: readonly string[], record: Listed): { ops: BatchOp[]; keys: string[] } {
  const after = indexKeys(record);
  const entry = listEntry(record);
  const ops: BatchOp[] = before.filter((k) => !after.includes(k)).map((key) => ({ type: "del", key }));
  for (const key of after) ops.push({ type: "put", key, value: entry });
  return { ops, keys: after };
}

/** Stores written before the index get one built from their records, once. */
export async function ensureListIndex(store: Store): Promise<void> {
  if (await store.get(INDEX_VERSION_KEY)) return;
  const ops: BatchOp[] = [];
  for (const { value } of await store.range<Listed>(keys.sessionPrefix)) ops.push(...reindexOps([], value).ops);
  ops.push({ type: "put", key: INDEX_VERSION_KEY, value: 1 });
  await store.batch(ops, true);
}
