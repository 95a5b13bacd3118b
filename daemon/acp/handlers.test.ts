/**
 * The ACP handlers through the seam a window uses: an `AcpConnection` whose `send` is a list in the
 * test, over a real `SessionManager` and store in a temporary folder (test/support/sessions.ts),
 * with the model scripted in memory. What is asserted is what a window would see on the wire.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { resolvePaths } from "../../shared/paths.js";
import { testSessions, type TestSessions } from "../../test/support/sessions.js";
import { AcpConnection } from "./connection.js";
import { INBOX_METHODS, STEER_METHOD } from "./reasonix-ext.js";

interface Message {
  id?: number;
  method?: string;
  params?: { update?: { sessionUpdate: string; content?: { text?: string } } } & Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** One window: requests in, everything the daemon sent out, in order. */
function window(s: TestSessions, vendor = true) {
  const sent: Message[] = [];
  const waiting = new Map<number, (m: Message) => void>();
  const services = {
    sessions: s.manager,
    config: () => s.config,
    paths: resolvePaths({ REASONIX_HOME: join(s.dir, "home") }),
    log: s.deps.log,
    version: "test",
  };
  const conn = new AcpConnection(
    (text) => {
      const m = JSON.parse(text) as Message;
      sent.push(m);
      if (m.id !== undefined && (m.result !== undefined || m.error !== undefined)) waiting.get(m.id)?.(m);
    },
    services,
    { env: { PATH: "/usr/bin" }, model: undefined, shimPid: undefined },
  );
  let next = 1;
  const call = (method: string, params: unknown): Promise<Message> => {
    const id = next++;
    const answered = new Promise<Message>((resolve) => waiting.set(id, resolve));
    conn.receive(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return answered;
  };
  const notify = (method: string, params: unknown): void => conn.receive(JSON.stringify({ jsonrpc: "2.0", method, params }));
  const open = async (): Promise<string> => {
    await call("initialize", { protocolVersion: 1, clientCapabilities: vendor ? { _meta: { "reasonix.io": {} } } : {} });
    const created = await call("session/new", { cwd: s.dir, mcpServers: [] });
    return created.result!.sessionId as string;
  };
  return { conn, sent, call, notify, open };
}

test("session/new answers first, then its start notices and slash menu; a prompt answers with its stop reason and userMessageId", async (t) => {
  const s = await testSessions();
  t.after(() => s.close());
  const w = window(s);
  const sessionId = await w.open();
  const after = w.sent.slice(w.sent.findIndex((m) => m.id === 2));
  assert.deepEqual(
    after.map((m) => (m.result ? "answer" : m.params?.update?.sessionUpdate)),
    ["answer", "agent_message_chunk", "available_commands_update"],
  );
  assert.match(after[1]!.params!.update!.content!.text!, /^\[notice\] /);
  assert.ok(after[0]!.result!.configOptions, "the answer carries the controls");

  const answered = await w.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
  assert.equal(answered.result!.stopReason, "end_turn");
  assert.match(String((answered.result!._meta as Record<string, { userMessageId: string }>)["reasonix.io"]!.userMessageId), /^[0-9a-f-]{36}$/);
  const unknown = await w.call("session/prompt", { sessionId: "nope", prompt: [{ type: "text", text: "x" }] });
  assert.equal(unknown.error!.code, -32002);
});

test("session/load: the replay, the slash menu, then the answer, and nothing of the session after it", async (t) => {
  const s = await testSessions();
  t.after(() => s.close());
  const a = window(s);
  const sessionId = await a.open();
  await a.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
  const b = window(s);
  await b.call("initialize", { protocolVersion: 1 });
  const loaded = await b.call("session/load", { sessionId, cwd: s.dir, mcpServers: [] });
  assert.equal(loaded.result!.modes !== undefined, true);
  const kinds = b.sent.filter((m) => m.method === "session/update").map((m) => m.params!.update!.sessionUpdate);
  assert.deepEqual(
    kinds.slice(0, 4),
    ["agent_message_chunk", "user_message_chunk", "session_info_update", "agent_message_chunk"],
    "notice, prompt, title, answer",
  );
  assert.equal(kinds.at(-1), "available_commands_update");
  assert.equal(b.sent.at(-1), loaded, "the answer is the last message");
});

test("the window that acts is recorded once, at dispatch: prompts, cancels and settings count, reads do not", async (t) => {
  const s = await testSessions();
  t.after(() => s.close());
  const w = window(s);
  const sessionId = await w.open();
  const stamp = (): number => (w.conn.lastActive = 1);
  stamp();
  await w.call("session/list", {});
  await w.call("_reasonix.io/session/status", { sessionId });
  await w.call(INBOX_METHODS.list, { sessionId });
  assert.equal(w.conn.lastActive, 1, "listing and reading are not acting");
  await w.call("session/set_mode", { sessionId, modeId: "plan" });
  assert.ok(w.conn.lastActive > 1, "a setting is");
  stamp();
  w.notify("session/cancel", { sessionId });
  assert.ok(w.conn.lastActive > 1, "so is a cancel, unknown session or not");
  stamp();
  await w.call("session/set_mode", { sessionId: "nope", modeId: "plan" });
  assert.ok(w.conn.lastActive > 1, "counted when dispatched, before the session is looked up");
  stamp();
  await w.call("session/set_mode", { modeId: 7 });
  assert.equal(w.conn.lastActive, 1, "a request whose params do not parse is not dispatched");
});

test("the vendor inbox methods speak to the session's verbs; an unknown session is -32602, a refused refresh -32600", async (t) => {
  const s = await testSessions();
  t.after(() => s.close());
  const w = window(s);
  const sessionId = await w.open();
  assert.deepEqual((await w.call(INBOX_METHODS.setPaused, { sessionId, paused: true })).result, { paused: true });
  const first = (await w.call(INBOX_METHODS.enqueue, { sessionId, text: "later", idempotencyKey: "k1" })).result!;
  assert.deepEqual([first.disposition, first.position, first.paused, first.idempotent], ["queued_followup", 0, true, false]);
  const again = (await w.call(INBOX_METHODS.enqueue, { sessionId, text: "later", idempotencyKey: "k1" })).result!;
  assert.deepEqual([again.itemId, again.idempotent], [first.itemId, true]);
  const steered = (await w.call(STEER_METHOD, { sessionId, prompt: [{ type: "text", text: "steer" }] })).result!;
  assert.equal(steered.disposition, "queued_followup", "no turn runs: the steer waits in line");
  const itemId = first.itemId as string;
  const got = (await w.call(INBOX_METHODS.get, { sessionId, itemId })).result!;
  assert.deepEqual(got.envelope, { text: "later", intent: "followup", source: "acp", idempotencyKey: "k1" });
  await w.call(INBOX_METHODS.update, { sessionId, itemId, text: "later, edited" });
  await w.call(INBOX_METHODS.move, { sessionId, itemId: steered.itemId, toIndex: 0 });
  assert.deepEqual((await w.call(INBOX_METHODS.refresh, { sessionId, itemId })).result, { ok: true });
  await w.call(INBOX_METHODS.delete, { sessionId, itemId: steered.itemId });
  const listed = (await w.call(INBOX_METHODS.list, { sessionId })).result as { items: Array<{ itemId: string }> };
  assert.deepEqual(
    listed.items.map((i) => i.itemId),
    [itemId],
  );
  assert.equal((await w.call(INBOX_METHODS.list, { sessionId: "nope" })).error!.code, -32602);

  await w.call(INBOX_METHODS.setPaused, { sessionId, paused: false });
  for (let i = 0; i < 500 && s.model.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(s.model.requests[0]?.messages.at(-1)?.content, "later, edited", "resumed, the follow-up runs");
  const gone = await w.call(INBOX_METHODS.refresh, { sessionId, itemId });
  assert.ok(gone.error && [-32600, -32602].includes(gone.error.code), "a follow-up that ran is no longer pending");
});
