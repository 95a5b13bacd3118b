/**
 * The MANDATORY requirements of the official ACP conformance kit (acp-tck, v1 ids) that concern
 * initialize, sessions, prompts, cancel, JSON-RPC, schema, transport and shutdown, one test each,
 * named by id, run against the real shim and daemon. Every test's teardown also checks that stdout
 * held only schema-valid JSON-RPC (SCHEMA-001/002, TRANSPORT-001, STDERR-001).
 */
import assert from "node:assert/strict";
import { world, test } from "./fixture.js";

const STOP_REASONS = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"];

test("INIT-001/002: initialize succeeds and answers the requested version 1 with agentInfo", async (t) => {
  const { agent } = await world(t);
  const r = await agent.initialize();
  assert.equal(r.protocolVersion, 1);
  assert.equal(r.agentInfo.name, "reasonix");
  assert.ok(r.agentInfo.version.length > 0);
});

test("INIT-003: an unsupported version probe (65535) answers 1, never the request echoed", async (t) => {
  const { agent } = await world(t);
  const r = await agent.rawRequest({ id: "v", method: "initialize", params: { protocolVersion: 65535, clientCapabilities: {} } });
  assert.equal(r.result.protocolVersion, 1);
  const r2 = await agent.rawRequest({ id: "v2", method: "initialize", params: { protocolVersion: 2 } });
  assert.equal(r2.result.protocolVersion, 1);
});

test("INIT-004 / AUTH: capabilities are well-formed; terminal auth only for clients that can run it", async (t) => {
  const { agent } = await world(t);
  const plain = await agent.initialize({ clientCapabilities: {} });
  assert.deepEqual(plain.authMethods, []);
  assert.equal(plain.agentCapabilities.loadSession, true);
  for (const key of ["list", "resume", "close", "delete"]) assert.deepEqual(plain.agentCapabilities.sessionCapabilities[key], {});
  assert.equal(plain.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(plain.agentCapabilities.promptCapabilities.image, false);
  const terminal = await agent.initialize({ clientCapabilities: { auth: { terminal: true } } });
  assert.equal(terminal.authMethods.length, 1);
  assert.equal(terminal.authMethods[0].type, "terminal");
});

test("SESSION-001/002: session/new with an absolute cwd gives distinct non-empty ids, modes and a model option", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const a = await agent.newSession(workdir);
  const b = await agent.newSession(workdir);
  assert.ok(typeof a.sessionId === "string" && a.sessionId.length > 0);
  assert.notEqual(a.sessionId, b.sessionId);
  assert.equal(a.modes.currentModeId, "normal");
  const model = a.configOptions.find((o: { id: string }) => o.id === "model");
  assert.equal(model.category, "model");
  assert.ok(model.options.some((o: { value: string }) => o.value === model.currentValue));
});

test("PROMPT-001/002: a prompt ends with a defined stopReason; every update carries the session id", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const r = await agent.prompt(sessionId, "hello");
  assert.ok(STOP_REASONS.includes(r.stopReason));
  const updates = agent.messages.filter((m) => m.method === "session/update");
  assert.ok(updates.length > 0);
  for (const u of updates) assert.equal(u.params.sessionId, sessionId);
});

test("PROMPT-003: text plus resource_link is accepted", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const r = await agent.prompt(sessionId, [
    { type: "text", text: "look" },
    { type: "resource_link", uri: "file:///tmp/x.txt", name: "x.txt" },
  ]);
  assert.equal(r.stopReason, "end_turn");
});

test("CANCEL-001/002: cancel yields stopReason cancelled, and every update precedes the response", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ content: ["a", "b"], hang: true });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const pending = agent.prompt(sessionId, "go");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  await agent.cancel(sessionId);
  assert.equal((await pending).stopReason, "cancelled");
  const at = agent.messages.findIndex((m) => m.result?.stopReason === "cancelled");
  // A stray update would already be on the wire ahead of the answer to a request sent now.
  await agent.rpc.request("session/list", {});
  assert.equal(agent.messages.slice(at + 1).filter((m) => m.method === "session/update").length, 0);
});

test("JSONRPC-001..005: ids echoed, -32601, -32700 with null id, notifications unanswered, connection usable", async (t) => {
  const { agent } = await world(t);
  await agent.initialize();
  const ok = await agent.rawRequest({ id: 41, method: "session/list", params: {} });
  assert.equal(ok.jsonrpc, "2.0");
  assert.equal(ok.id, 41);
  const str = await agent.rawRequest({ id: "str-id", method: "session/list", params: {} });
  assert.equal(str.id, "str-id");
  assert.equal((await agent.rawRequest({ id: "u", method: "nope/nope", params: {} })).error.code, -32601);
  const from = agent.messages.length;
  agent.writeRaw("{oops\n");
  assert.equal((await agent.waitForLine((m) => m.error?.code === -32700, undefined, from)).id, null);
  agent.writeRaw('{"jsonrpc":"2.0","method":"_x/notice","params":{}}\n');
  const after = await agent.rawRequest({ id: "last", method: "session/list", params: {} });
  assert.ok(after.result);
  assert.deepEqual(
    agent.messages
      .slice(from)
      .filter((m) => !("method" in m))
      .map((m) => m.id),
    [null, "last"],
  );
});

test("ERROR-001: error responses carry an integer code and a one-line message", async (t) => {
  const { agent } = await world(t);
  await agent.initialize();
  const r = await agent.rawRequest({ id: "e", method: "session/new", params: { cwd: 42 } });
  assert.ok(Number.isInteger(r.error.code));
  assert.equal(typeof r.error.message, "string");
  assert.ok(!r.error.message.includes("\n"));
});

test("EXT-001 / META-001: unknown _ requests get -32601; _meta in params is accepted", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize({ _meta: { "example.com": { x: 1 } } });
  assert.equal((await agent.rawRequest({ id: "x", method: "_example.com/do", params: {} })).error.code, -32601);
  const s = await agent.newSession(workdir, { _meta: { traceparent: "00-abc-def-01" } });
  assert.ok(s.sessionId);
});

test("CLIENTCAP-001..003: without fs or terminal capabilities the agent never calls them", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] }, { content: ["done"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "read a.txt");
  assert.deepEqual(
    agent.agentRequests.filter((r) => /^(fs|terminal|elicitation)\//.test(r.method)),
    [],
  );
});

test("SHUTDOWN-001 / TRANSPORT-002: the process exits when stdin closes", async (t) => {
  const { agent } = await world(t);
  await agent.initialize();
  assert.equal(await agent.closeStdin(), 0);
});
