import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanStore } from "./integrity.js";
import { type Form, KINDS, type KeyKind, keyspace, sessionOfKey } from "./keyspace.js";
import { finishRemovals, removeSession } from "./removal.js";
import { type BatchOp, Store } from "./store.js";

async function tempStore(t: TestContext): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), "rx-removal-"));
  const store = await Store.open(join(dir, "db"));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

/** Two keys of `kind` for session `id`; text starts above U+00FF, past the end a `prefix + "\xff"` range had. */
function keysFor(kind: KeyKind, id: string): string[] {
  const value = (f: Form, n: number): string | number =>
    f.kind === "id" ? id : f.kind === "digits" ? n : f.kind === "hex" ? `0af${n}` : f.kind === "any" ? `键 ${n} with ! inside` : `键-${n}`;
  return [...new Set([1, 2].map((n) => kind.key(...kind.forms.map((f) => value(f, n)))))];
}

/** One or two keys of every kind the keyspace says belongs to a session, for each of `ids`. */
function everyKind(ids: string[]): BatchOp[] {
  const owned = KINDS.filter((k) => k.session !== "none" && k !== keyspace.removal);
  return ids.flatMap((id) => owned.flatMap((kind) => keysFor(kind, id).map((key) => ({ type: "put" as const, key, value: { id } }))));
}

const naming = async (store: Store, id: string): Promise<string[]> => (await store.keysOf("")).filter((k) => k.includes(id));

test("removeSession takes every key of every kind the keyspace gives a session, and nothing of another's", async (t) => {
  const store = await tempStore(t);
  const [gone, kept, longer] = ["d0c5e55a", "7e11e4a1", "d0c5e55a-2"];
  await store.batch([...everyKind([gone, kept, longer]), { type: "put", key: keyspace.listVersion.key(), value: 1 }], true);
  const before = await store.keysOf("");
  const located = before.filter((k) => keyspace.list.sessionOf(k) === gone || keyspace.listByCwd.sessionOf(k) === gone);
  assert.equal(located.length, 4);

  await removeSession(store, gone, located);
  assert.deepEqual(
    (await store.keysOf("")).filter((k) => sessionOfKey(k) === gone),
    [],
  );
  assert.deepEqual(await store.keysOf(""), before.filter((k) => sessionOfKey(k) !== gone).sort());

  // A record that cannot be read names no index keys: those kinds are searched whole instead.
  await removeSession(store, kept, undefined);
  assert.deepEqual(await naming(store, kept), []);
  assert.ok((await naming(store, longer)).length > 10, "a session whose id starts with another's keeps its keys");
  assert.ok(await store.get(keyspace.listVersion.key()), "the store's own keys stay");
});

test("a delete cut short after its first batch: gone for readers, no damage for the scan, finished at the next start", async (t) => {
  const store = await tempStore(t);
  const id = "cut-short";
  await store.batch(
    [
      ...everyKind([id, "other"]),
      ...[1, 2, 3].map((n) => ({ type: "put" as const, key: keyspace.event.key(id, n), value: { seq: n } })),
      { type: "put", key: keyspace.session.key(id), value: { id, lastSeq: 3, historyLength: 0 } },
    ],
    true,
  );
  // What the first batch of removeSession leaves behind when the daemon dies right after it.
  const listed = (await store.keysOf("")).filter((k) => keyspace.list.sessionOf(k) === id || keyspace.listByCwd.sessionOf(k) === id);
  await store.batch(
    [
      { type: "put", key: keyspace.removal.key(id), value: { at: new Date().toISOString() } },
      ...KINDS.filter((k) => k.session === "key" && k !== keyspace.removal).map((k) => ({ type: "del" as const, key: k.key(id) })),
      ...listed.map((key) => ({ type: "del" as const, key })),
    ],
    true,
  );
  assert.equal(await store.get(keyspace.session.key(id)), undefined);
  assert.ok((await store.keysOf(keyspace.event.range(id))).length > 0, "its ledger is still there");

  await scanStore(store);
  assert.deepEqual(store.damageOf(id), [], "leftovers of a delete under way are not a lost record");

  assert.equal(await finishRemovals(store), 1);
  assert.deepEqual(await naming(store, id), []);
  assert.ok((await naming(store, "other")).length > 10);
  assert.equal(await finishRemovals(store), 0);
});
