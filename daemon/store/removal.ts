/**
 * Removing everything the store holds of one session (session/delete, prunes, a fork that failed),
 * read from the keyspace: every kind whose shape names the session goes, so a kind added there is
 * removed without anyone listing it here.
 *
 * Order, for a crash at any point. One synced batch first takes the session out of reach: its
 * record, its other single keys and its list entries go, and a `deleting!<id>` mark comes. From
 * then on a load finds no session and a list shows none, and what is left cannot be mistaken for a
 * session whose record was lost (damage). The ranges (ledger, history, inbox items, receipts,
 * checkpoints, blobs, jobs, tasks) go next, a thousand keys a batch, and the mark last. A daemon that
 * died on the way finishes at its next start (`finishRemovals`), before it serves anyone. The other
 * order, record last, would leave after a crash a session that loads with holes in its ledger.
 */
import { KINDS, keyspace } from "./keyspace.js";
import type { BatchOp, Store } from "./store.js";

const single = KINDS.filter((k) => k.session === "key" && k !== keyspace.removal);
const ranged = KINDS.filter((k) => k.session === "range");
const within = KINDS.filter((k) => k.session === "within");

/**
 * Removes session `id` from the store. `located`: the keys of kinds that hold the id further in
 * (the list index), as the session's record names them; undefined when the record could not be
 * read, and they are looked for through those kinds' whole ranges.
 */
export async function removeSession(store: Store, id: string, located: readonly string[] | undefined): Promise<void> {
  // No session's id is empty or holds "!": nothing of such a name is stored, and its ranges would be others'.
  if (!id || id.includes("!")) return;
  const found = located ?? (await Promise.all(within.map((k) => store.keysOf(k.range())))).flat().filter((key) => within.some((k) => k.sessionOf(key) === id));
  const ops: BatchOp[] = [
    { type: "put", key: keyspace.removal.key(id), value: { at: new Date().toISOString() } },
    ...single.map((k) => ({ type: "del" as const, key: k.key(id) })),
    ...found.map((key) => ({ type: "del" as const, key })),
  ];
  await store.batch(ops, true);
  await dropRanges(store, id);
}

/** The removals a daemon that died left unfinished, finished; returns how many there were. */
export async function finishRemovals(store: Store): Promise<number> {
  const marks = await store.keysOf(keyspace.removal.range());
  for (const mark of marks) {
    const id = keyspace.removal.sessionOf(mark);
    if (id) await dropRanges(store, id);
    else await store.batch([{ type: "del", key: mark }], false);
  }
  return marks.length;
}

async function dropRanges(store: Store, id: string): Promise<void> {
  for (const k of ranged) await store.deletePrefix(k.range(id));
  // Synced: after a power cut LevelDB may skip a torn part of its log and keep what follows it.
  await store.batch([{ type: "del", key: keyspace.removal.key(id) }], true);
}
