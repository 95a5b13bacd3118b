import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keys, Store, StoreWriteError, type JsonCursor, type JsonPage } from "./store.js";
import { mountSmallDisk } from "../../test/support/tmpfs.js";

async function openStore(t: TestContext): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), "rx-cursor-"));
  const store = await Store.open(join(dir, "db"));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

const put = (store: Store, id: string, from: number, to: number): Promise<void> =>
  store.batch(
    Array.from({ length: to - from + 1 }, (_, i) => ({
      type: "put" as const,
      key: keys.event(id, from + i),
      value: { seq: from + i, text: `entry ${from + i}` },
    })),
    false,
  );

async function drain(cursor: JsonCursor): Promise<JsonPage[]> {
  const pages = [];
  for (let page = await cursor.next(); page.length > 0; page = await cursor.next()) pages.push(page);
  return pages;
}

test("a cursor reads a long range page after page, in key order, each value its stored JSON text, and nothing of the next prefix", async (t) => {
  const store = await openStore(t);
  await put(store, "s1", 1, 1000);
  await put(store, "s2", 1, 5);
  const cursor = store.jsonCursor(keys.eventPrefix("s1"), { from: keys.event("s1", 3), limit: 64, maxBytes: 1024 * 1024 });
  const pages = await drain(cursor);
  assert.ok(pages.length >= 1000 / 64, `${pages.length} pages`);
  assert.ok(
    pages.every((p) => p.length <= 64),
    "no page over the limit",
  );
  const entries = pages.flat();
  assert.deepEqual(
    entries.map(([key]) => key),
    Array.from({ length: 998 }, (_, i) => keys.event("s1", i + 3)),
  );
  assert.deepEqual(entries[0]![1], JSON.stringify({ seq: 3, text: "entry 3" }));
  await cursor.close();
  assert.deepEqual(await cursor.next(), [], "nothing once closed");
});

test("a page stops a little past maxBytes; records written after the cursor started are read once it has read what was there", async (t) => {
  const store = await openStore(t);
  await put(store, "s", 1, 300);
  const cursor = store.jsonCursor(keys.eventPrefix("s"), { limit: 256, maxBytes: 2048 });
  t.after(() => cursor.close());
  const first = await cursor.next();
  assert.ok(first.length > 0 && first.length < 256, `${first.length} values in a page of about 2 KiB`);
  // Written while the cursor's iterator reads the store as it was.
  await put(store, "s", 301, 320);
  const rest = (await drain(cursor)).flat();
  assert.deepEqual(
    [...first, ...rest].map(([key]) => key),
    Array.from({ length: 320 }, (_, i) => keys.event("s", i + 1)),
  );
  await put(store, "s", 321, 321);
  assert.deepEqual(
    (await cursor.next()).map(([key]) => key),
    [keys.event("s", 321)],
    "a cursor that ran out goes on from where it stopped",
  );
});

test("a cursor open across a reopen of the store (disk full, then space back) goes on from where it stopped", async (t) => {
  const disk = mountSmallDisk(16);
  if (typeof disk === "string") return t.skip(disk);
  t.after(() => disk.unmount());
  const store = await Store.open(join(disk.dir, "db"));
  t.after(() => store.close());
  await put(store, "s", 1, 500);
  const cursor = store.jsonCursor(keys.eventPrefix("s"), { limit: 100, maxBytes: 1024 * 1024 });
  t.after(() => cursor.close());
  const first = await cursor.next();
  assert.equal(first.length, 100);
  disk.fill();
  const failure = await store.batch([{ type: "put", key: "k!during", value: "x".repeat(256 * 1024) }], true).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(failure instanceof StoreWriteError && failure.diskFull);
  disk.unfill();
  // A write once space is back reopens the store, which closes every iterator, the cursor's too.
  await store.batch([{ type: "put", key: "k!after", value: "saved" }], true);
  assert.equal(store.health().writable, true);
  const rest = (await drain(cursor)).flat();
  assert.deepEqual(
    [...first, ...rest].map(([key]) => key),
    Array.from({ length: 500 }, (_, i) => keys.event("s", i + 1)),
  );
});
