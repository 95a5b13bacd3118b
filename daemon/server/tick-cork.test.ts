import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, connect, type Socket } from "node:net";
import { test } from "node:test";
import { BUSY_FRAMES, MAX_HELD_BYTES, tickCork } from "./tick-cork.js";

async function pair(t: { after(fn: () => void): void }): Promise<{ client: Socket; received: () => string }> {
  let got = "";
  const accepted: Socket[] = [];
  const server = createServer((s) => {
    accepted.push(s);
    s.on("data", (d) => (got += d.toString()));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const client = connect((server.address() as { port: number }).port, "127.0.0.1");
  await once(client, "connect");
  t.after(() => {
    // Both ends, or the server side lingers and holds the test process for a minute after the tests.
    client.destroy();
    for (const s of accepted) s.destroy();
    server.close();
  });
  return { client, received: () => got };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), "condition not reached");
}

test("frames written in one turn are held, then all leave in order; later ones follow", async (t) => {
  const { client, received } = await pair(t);
  const cork = tickCork(client, 50);
  for (const m of ["a", "b", "c"]) {
    cork();
    client.write(m);
  }
  assert.equal(client.writableCorked, 1, "one cork for the whole turn");
  assert.equal(client.writableLength, 3, "nothing left before the turn ended");
  await until(() => received() === "abc");
  assert.equal(client.writableCorked, 0);
  // Within the spacing the next frames wait for the timer, still in order and complete.
  for (const m of ["d", "e"]) {
    cork();
    client.write(m);
  }
  assert.equal(client.writableCorked, 1);
  await until(() => received() === "abcde");
});

test("a destroyed socket is not corked", async (t) => {
  const { client } = await pair(t);
  const cork = tickCork(client);
  client.destroy();
  cork();
  assert.equal(client.writableCorked, 0);
});

test("an answer written while notifications wait for the spacing takes them all out at the end of the turn", async (t) => {
  const { client, received } = await pair(t);
  const cork = tickCork(client, 60_000);
  cork();
  client.write("a");
  await until(() => received() === "a");
  // Within the (long) spacing a notification waits for the timer...
  cork();
  client.write("b");
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(received(), "a", "the notification is held");
  // ...until an answer comes: both leave in this turn, in the order written.
  cork(true);
  client.write("c");
  assert.equal(client.writableCorked, 1);
  await until(() => received() === "abc");
  assert.equal(client.writableCorked, 0);
  // An answer after a flush does not wait for the spacing either.
  cork(true);
  client.write("d");
  await until(() => received() === "abcd");
});

test("after a busy flush (BUSY_FRAMES frames or more) the next waits the longer spacing; after a light one, the short", async (t) => {
  const { client, received } = await pair(t);
  const cork = tickCork(client, 0, 60_000);
  const send = (m: string): void => {
    cork();
    client.write(m);
  };
  // A light flush: the next frame, after the (zero) short spacing, leaves at once.
  send("a");
  await until(() => received() === "a");
  send("b");
  await until(() => received() === "ab");
  // A busy flush...
  for (const m of "cdef".slice(0, BUSY_FRAMES)) send(m);
  await until(() => received() === "abcdef".slice(0, 2 + BUSY_FRAMES));
  // ...holds the next notification for the long spacing; an answer still takes it out.
  send("x");
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(received().endsWith("x"), false, "held after a busy flush");
  cork(true);
  client.write("y");
  await until(() => received().endsWith("xy"));
});

test("held bytes past MAX_HELD_BYTES leave at once, so the cork never looks like a window's backlog", async (t) => {
  const { client, received } = await pair(t);
  const cork = tickCork(client, 60_000, 60_000);
  const big = "x".repeat(MAX_HELD_BYTES / 2);
  cork();
  client.write("a");
  await until(() => received() === "a");
  // Within the spacing: held...
  for (let i = 0; i < 2; i++) {
    cork();
    client.write(big);
  }
  assert.ok(client.writableLength >= MAX_HELD_BYTES);
  // ...until the next write finds the limit reached: what was held goes now, the new frame is held.
  cork();
  client.write("z");
  assert.ok(client.writableLength < MAX_HELD_BYTES, `held ${client.writableLength}`);
  await until(() => received().length === 1 + 2 * big.length);
  assert.equal(received().endsWith("z"), false);
});
