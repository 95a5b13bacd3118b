import { test } from "node:test";
import assert from "node:assert/strict";
import { TestWindow } from "../../test/support/sessions.js";
import { Attachments } from "./attachments.js";
import { EditorRouter } from "./editor-router.js";

test("updates go to every reachable window but the excluded one; a wait ends at the next attach, the timeout or the abort", async (t) => {
  // The wait's own timer is unref'd (it must not hold a daemon up): something else keeps this test's loop alive.
  const alive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(alive));
  const windows = new Attachments("s1");
  const [a, b, gone] = [new TestWindow("a"), new TestWindow("b"), new TestWindow("gone")];
  assert.equal(windows.any(), false);
  const waited = windows.waitForAttach(5_000, new AbortController().signal);
  windows.attach(a);
  assert.equal(await waited, true);
  windows.attach(b);
  windows.attach(gone);
  gone.closed = true;
  windows.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } }, b);
  assert.deepEqual([a.updates.length, b.updates.length, gone.updates.length], [1, 0, 0]);
  assert.deepEqual([windows.detach(b), windows.detach(b), windows.size], [true, false, 2]);
  assert.equal(await windows.waitForAttach(10, new AbortController().signal), false, "the timeout");
  const abort = new AbortController();
  const aborted = windows.waitForAttach(5_000, abort.signal);
  abort.abort();
  assert.equal(await aborted, false, "the abort");
});

test("a window added by a load's replay is sent updates at once; whoever waits for a window is woken only by wake()", async (t) => {
  const alive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(alive));
  const windows = new Attachments("s1");
  const loading = new TestWindow("loading");
  let woken = false;
  const waited = windows.waitForAttach(5_000, new AbortController().signal).then((v) => (woken = v));
  windows.add(loading);
  windows.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "live" } });
  assert.equal(loading.updates.length, 1, "the update recorded after the replay caught up reaches the window");
  await new Promise((r) => setImmediate(r));
  assert.equal(woken, false, "a held turn waits for the load's answer");
  windows.wake();
  await waited;
  assert.equal(woken, true);
});

test("an editor request goes to the turn's origin, else the latest active window that offers the capability", () => {
  const windows = new Attachments("s1");
  const [a, b] = [new TestWindow("a"), new TestWindow("b")];
  a.lastActive = 1;
  b.lastActive = 2;
  windows.attach(a);
  windows.attach(b);
  let origin: TestWindow | undefined;
  const router = new EditorRouter(windows, () => origin);
  assert.equal(router.pick("any"), b);
  origin = a;
  assert.equal(router.pick("any"), a);
  assert.equal(router.pick("terminal"), undefined, "neither offers terminals");
  assert.equal(router.pick("any", new Set([a])), b, "a window the question left is skipped");
});
