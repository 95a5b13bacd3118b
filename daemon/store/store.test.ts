import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DAMAGED, decodeValue, encodeValue } from "./codec.js";
import { holes, scanStore } from "./integrity.js";
import { keys, Store, StoreWriteError } from "./store.js";
import { mountSmallDisk } from "../../test/support/tmpfs.js";

test("values carry a checksum: a changed byte decodes as DAMAGED; bare JSON from older stores still reads", () => {
  const text = encodeValue({ text: "hello", n: 1 });
  assert.deepEqual(decodeValue(text), { text: "hello", n: 1 });
  assert.equal(decodeValue(text.replace("hello", "hellp")), DAMAGED);
  assert.equal(decodeValue(`${text.slice(0, -1)}`), DAMAGED);
  const sum = text.slice(1, 9);
  for (const changed of [`${sum.slice(0, 7)}g`, sum.toUpperCase() === sum ? "0000000x" : sum.toUpperCase(), `${sum.slice(1)}0`]) {
    assert.equal(decodeValue(`~${changed}${text.slice(9)}`), DAMAGED, changed);
  }
  assert.deepEqual(decodeValue('{"legacy":true}'), { legacy: true });
  assert.equal(decodeValue("{not json"), DAMAGED);
});

test("a session being made (a fork whose record is not written yet) is no orphan to the scan; once given up, it is", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open(join(dir, "db"));
  t.after(() => store.close());
  await store.batch([{ type: "put", key: keys.event("fork", 1), value: { seq: 1 } }], true);
  assert.equal((await scanStore(store, { beingMade: (id) => id === "fork" })).damaged, 0);
  assert.deepEqual(store.damageOf("fork"), []);
  assert.equal((await scanStore(store, { beingMade: () => false })).damaged, 1);
  assert.deepEqual(
    store.damageOf("fork").map((d) => d.detail),
    ["the session's record is missing; its ledger is still stored"],
  );
});

test("holes: the runs missing from a numbered sequence", () => {
  assert.deepEqual(holes([1, 2, 3], 1), []);
  assert.deepEqual(holes([1, 4, 5, 9], 1), [
    [2, 3],
    [6, 8],
  ]);
  assert.deepEqual(holes([2, 3], 1, 5), [
    [1, 1],
    [4, 5],
  ]);
  assert.deepEqual(holes([], 0, -1), []);
});

test("the integrity scan finds ledger holes, a record promising more than is stored, and orphaned ledgers", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open(join(dir, "db"));
  const ops = [
    { type: "put" as const, key: keys.session("a"), value: { id: "a", lastSeq: 3, historyLength: 1 } },
    ...[1, 2, 3].map((n) => ({ type: "put" as const, key: keys.event("a", n), value: { seq: n } })),
    { type: "put" as const, key: keys.history("a", 0), value: { role: "system" } },
    { type: "put" as const, key: keys.session("b"), value: { id: "b", lastSeq: 6, historyLength: 0 } },
    ...[1, 2, 5].map((n) => ({ type: "put" as const, key: keys.event("b", n), value: { seq: n } })),
    { type: "put" as const, key: keys.event("c", 1), value: { seq: 1 } },
  ];
  await store.batch(ops, true);
  const found = await scanStore(store);
  await store.close();
  assert.equal(found.sessions, 2);
  assert.equal(found.damaged, 2);
  const damage = store.health().damage;
  assert.deepEqual(
    damage.map((d) => [d.sessionId, d.detail]),
    [
      ["b", "ledger entries missing: 3–4, 6"],
      ["c", "the session's record is missing; its ledger is still stored"],
    ],
  );
  assert.deepEqual(store.damageOf("a"), []);
});

test("the integrity scan read a page at a time finds the same: orphans before, between and after the pages' records, holes in any page", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const put = (key: string, value: unknown) => ({ type: "put" as const, key, value });
  const ops = [
    put(keys.event("a", 1), { seq: 1 }),
    put(keys.session("b"), { id: "b", lastSeq: 2, historyLength: 0 }),
    ...[1, 2].map((n) => put(keys.event("b", n), { seq: n })),
    put(keys.history("c", 0), { role: "user" }),
    put(keys.session("d"), { id: "d", lastSeq: 4, historyLength: 2 }),
    ...[1, 3].map((n) => put(keys.event("d", n), { seq: n })),
    put(keys.history("d", 1), { role: "user" }),
    // Longer than the scan's slice of keys (4,096), with a hole past it.
    put(keys.session("f"), { id: "f", lastSeq: 5000, historyLength: 0 }),
    ...Array.from({ length: 5000 }, (_, i) => i + 1)
      .filter((n) => n !== 4097)
      .map((n) => put(keys.event("f", n), { seq: n })),
    put(keys.event("g", 1), { seq: 1 }),
  ];
  const expected = [
    ["a", "the session's record is missing; its ledger is still stored"],
    ["c", "the session's record is missing; its ledger is still stored"],
    ["d", "ledger entries missing: 2, 4"],
    ["d", "conversation messages missing: 0"],
    ["f", "ledger entries missing: 4097"],
    ["g", "the session's record is missing; its ledger is still stored"],
  ];
  for (const page of [1, 2, 3, 256]) {
    const store = await Store.open(join(dir, `db-${page}`));
    await store.batch(ops, true);
    let pauses = 0;
    const found = await scanStore(store, { page, between: async () => ++pauses > 0 });
    await store.close();
    assert.equal(found.sessions, 3, `page of ${page}`);
    assert.equal(pauses, Math.floor(3 / page), `page of ${page}: a pause between pages`);
    const damage = store.health().damage.map((d) => [d.sessionId, d.detail]);
    assert.deepEqual(
      damage.sort((x, y) => String(x).localeCompare(String(y))),
      [...expected].sort((x, y) => String(x).localeCompare(String(y))),
      `page of ${page}`,
    );
  }
  const store = await Store.open(join(dir, "db-1"));
  const stopped = await scanStore(store, { page: 1, between: async () => false });
  await store.close();
  assert.equal(stopped.sessions, 1, "a pause that says stop ends the scan after its page");
});

test("a value changed on disk is never handed on: get refuses it, range leaves it out, both record the damage", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "db");
  let store = await Store.open(db);
  await store.batch(
    [1, 2, 3].map((n) => ({ type: "put", key: keys.event("s", n), value: { seq: n, text: `entry-number-${n}` } })),
    true,
  );
  await store.close();
  // The values sit uncompressed in the log; change one character of one of them.
  const log = readdirSync(db).find((f) => f.endsWith(".log"))!;
  const bytes = readFileSync(join(db, log));
  const at = bytes.indexOf("entry-number-2");
  assert.ok(at > 0);
  bytes[at] = "E".charCodeAt(0);
  writeFileSync(join(db, log), bytes);
  // LevelDB's log record checksum catches this one at open and drops the record; either way nothing
  // changed may come back as if it were the stored value.
  store = await Store.open(db);
  t.after(() => store.close());
  const entries = await store.range<{ text: string }>(keys.eventPrefix("s"));
  assert.ok(
    entries.every((e) => e.value.text.startsWith("entry-number-")),
    JSON.stringify(entries),
  );
  assert.ok(entries.length < 3);
  assert.ok(store.health().damage.length > 0, "the loss is recorded");
});

test("disk full: writes fail with the cause, stop until the store is reopened, and nothing written after space returns is lost", async (t) => {
  const disk = mountSmallDisk(16);
  if (typeof disk === "string") return t.skip(disk);
  t.after(() => disk.unmount());
  const db = join(disk.dir, "db");
  let store = await Store.open(db);
  await store.batch([{ type: "put", key: "k!before", value: "saved" }], true);

  disk.fill();
  const big = "x".repeat(256 * 1024);
  const failure = await store.batch([{ type: "put", key: "k!during", value: big }], true).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure instanceof StoreWriteError);
  assert.equal(failure.message, `no space left on the disk holding ${db}`);
  assert.equal(failure.diskFull, true);
  // Until reopened, every write fails at once with the same cause, even a small one that would fit.
  await assert.rejects(store.batch([{ type: "put", key: "k!small", value: 1 }], false), (e) => e === failure);
  assert.equal(await store.get("k!before"), "saved", "reads go on");
  assert.equal(store.health().writable, false);

  const recovered = new Promise<void>((resolve) => store.onRecovered(resolve));
  disk.unfill();
  await recovered;
  assert.equal(store.health().writable, true);
  await store.batch([{ type: "put", key: "k!after", value: big }], true);
  await store.batch([{ type: "put", key: "k!last", value: "end" }], true);
  await store.close();

  store = await Store.open(db);
  t.after(() => store.close());
  assert.equal(await store.get("k!before"), "saved");
  assert.equal(await store.get("k!during"), undefined, "the write reported as failed did not come back");
  assert.equal(await store.get("k!small"), undefined);
  assert.equal((await store.get<string>("k!after"))?.length, big.length, "a write acknowledged after space returned survived the reopen");
  assert.equal(await store.get("k!last"), "end");
  assert.deepEqual(store.health().damage, [], `no damage: ${JSON.stringify(store.health().damage)}`);
  assert.ok(statSync(db).isDirectory());
});

/** Waits for the store to report a failure without being written to: the folder timer's part. */
async function failureSeen(store: Store): Promise<StoreWriteError> {
  const deadline = Date.now() + 2000;
  while (store.failure === undefined) {
    if (Date.now() > deadline) throw new Error("the store did not notice its folder within 2 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  return store.failure;
}

const refusal = (store: Store) =>
  store.batch([{ type: "put", key: "k!after", value: "never" }], true).then(
    () => undefined,
    (e: unknown) => e,
  );

/** A store in a temporary folder of its own (`db` inside it), closed and removed after the test. */
async function openInTemp(t: TestContext): Promise<{ dir: string; db: string; store: Store }> {
  const dir = mkdtempSync(join(tmpdir(), "rx-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "db");
  const store = await Store.open(db);
  t.after(() => store.close());
  return { dir, db, store };
}

test("a store folder removed under the open store: the next write is refused naming the folder, and nothing recreates it", async (t) => {
  const { db, store } = await openInTemp(t);
  await store.batch([{ type: "put", key: "k!before", value: "saved" }], true);

  rmSync(db, { recursive: true });
  const refused = await refusal(store);
  assert.ok(refused instanceof StoreWriteError);
  assert.equal(refused.message, `the store folder ${db} was removed while the daemon ran; nothing more can be saved until the daemon is restarted`);
  assert.equal(refused.folder, "gone");
  assert.deepEqual(store.health().failure, refused.message);
  // A folder that is gone is never tried again: a fresh database under its name would hide the loss.
  await store.retryNow();
  assert.equal(store.failure, refused);
  assert.equal(existsSync(db), false);
});

test("a store folder removed while nothing is written: the folder timer fails the store within a second", async (t) => {
  const { db, store } = await openInTemp(t);
  rmSync(db, { recursive: true });
  const failure = await failureSeen(store);
  assert.match(failure.message, new RegExp(`^the store folder ${db} was removed while the daemon ran`));
  assert.equal(store.health().writable, false);
});

test("a store folder replaced (renamed away, an empty one made in its place): noticed without a write, nothing goes into the new folder, the old one keeps what was acknowledged", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "db");
  const away = join(dir, "db.away");
  let store = await Store.open(db);
  await store.batch([{ type: "put", key: "k!before", value: "saved" }], true);

  renameSync(db, away);
  mkdirSync(db);
  const failure = await failureSeen(store);
  assert.equal(failure.folder, "gone");
  assert.match(failure.message, new RegExp(`^the store folder ${db} was replaced while the daemon ran`));
  assert.equal(await refusal(store), failure);
  await store.retryNow();
  assert.equal(store.failure, failure, "never reopened");
  await store.close();
  assert.deepEqual(readdirSync(db), [], "nothing was written into the new folder");

  store = await Store.open(away);
  t.after(() => store.close());
  assert.equal(await store.get("k!before"), "saved");
  assert.equal(await store.get("k!after"), undefined);
});

test("the store's LOCK file removed under it: writes are refused, naming the folder", async (t) => {
  const { db, store } = await openInTemp(t);
  rmSync(join(db, "LOCK"));
  const refused = await refusal(store);
  assert.ok(refused instanceof StoreWriteError);
  assert.equal(refused.folder, "gone");
  assert.match(refused.message, new RegExp(`^the files of the store folder ${db} were removed or replaced`));
});

test("a store folder made unwritable (the immutable flag, which holds for root too): noticed without a write; writes resume once it is writable again", async (t) => {
  const { db, store } = await openInTemp(t);
  await store.batch([{ type: "put", key: "k!before", value: "saved" }], true);
  try {
    execFileSync("chattr", ["+i", db], { stdio: "pipe" });
  } catch (err) {
    return t.skip(`cannot set the immutable flag here (${(err as Error).message.split("\n")[0]})`);
  }
  let flagged = true;
  const unflag = () => {
    if (flagged) execFileSync("chattr", ["-i", db], { stdio: "pipe" });
    flagged = false;
  };
  t.after(unflag);

  const failure = await failureSeen(store);
  assert.equal(failure.folder, "unwritable");
  assert.equal(failure.message, `the store folder ${db} is not writable (EPERM)`);
  assert.equal(await refusal(store), failure);

  unflag();
  // The write that finds the store failed tries it again itself.
  await store.batch([{ type: "put", key: "k!again", value: "saved" }], true);
  assert.equal(store.health().writable, true);
  assert.equal(await store.get("k!again"), "saved");
  assert.equal(await store.get("k!after"), undefined);
});

test("disk full: a write made right after space returns goes through, without waiting for the poll", async (t) => {
  const disk = mountSmallDisk(16);
  if (typeof disk === "string") return t.skip(disk);
  t.after(() => disk.unmount());
  const db = join(disk.dir, "db");
  const store = await Store.open(db);
  t.after(() => store.close());
  disk.fill();
  const failure = await store.batch([{ type: "put", key: "k!during", value: "x".repeat(256 * 1024) }], true).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure instanceof StoreWriteError && failure.diskFull);
  assert.equal(await refusal(store), failure, "refused while the disk is full");

  disk.unfill();
  // In the same turn of the event loop as the space coming back: no poll can have run in between.
  await store.batch([{ type: "put", key: "k!right-after", value: "saved" }], true);
  assert.equal(store.health().writable, true);
  assert.equal(await store.get("k!right-after"), "saved");
});
