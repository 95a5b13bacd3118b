import assert from "node:assert/strict";
import { test, world } from "./fixture.js";

test("bad params and unknown things get the right codes; the connection goes on", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();

  const relative = await agent.rawRequest({ id: "rel", method: "session/new", params: { cwd: "relative/dir", mcpServers: [] } });
  assert.equal(relative.error.code, -32602);
  assert.match(relative.error.message, /cwd/);

  const missing = await agent.rawRequest({ id: "missing", method: "session/new", params: { mcpServers: [] } });
  assert.equal(missing.error.code, -32602);
  assert.match(missing.error.message, /cwd/);

  for (const method of ["session/prompt", "session/load", "session/resume", "session/close"]) {
    const params =
      method === "session/prompt"
        ? { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] }
        : { sessionId: "no-such-session", cwd: workdir, mcpServers: [] };
    const r = await agent.rawRequest({ id: `unknown-${method}`, method, params });
    assert.equal(r.error.code, -32002, method);
    assert.equal(r.error.data.sessionId, "no-such-session", method);
  }

  const unknown = await agent.rawRequest({ id: "m", method: "session/teleport", params: {} });
  assert.equal(unknown.error.code, -32601);
  const vendor = await agent.rawRequest({ id: "v", method: "_example.com/thing", params: {} });
  assert.equal(vendor.error.code, -32601);
  const steer = await agent.rawRequest({ id: "s", method: "session/steer", params: {} });
  assert.equal(steer.error.code, -32601);

  const { sessionId } = await agent.newSession(workdir);
  const empty = await agent.rawRequest({ id: "empty", method: "session/prompt", params: { sessionId, prompt: [] } });
  assert.equal(empty.error.code, -32602);
  assert.ok(typeof sessionId === "string" && sessionId.length > 0);
});

test("a line that is not JSON gets -32700 with id null, and the next request is still answered", async (t) => {
  const { agent } = await world(t);
  await agent.initialize();
  const from = agent.messages.length;
  agent.writeRaw("this is not json\n");
  const parseError = await agent.waitForLine((m) => m.error?.code === -32700, undefined, from);
  assert.equal(parseError.id, null);
  agent.writeRaw('{"jsonrpc":"2.0","id":"x", "method":\n');
  await agent.waitForLine((m) => m.error?.code === -32700, undefined, from + 1);
  const batch = await agent.rawRequest({ id: "after", method: "session/list", params: {} });
  assert.ok(Array.isArray(batch.result.sessions));
  agent.writeRaw("[]\n");
  const invalid = await agent.waitForLine((m) => m.error?.code === -32600, undefined, from);
  assert.equal(invalid.id, null);
});

test("notifications are never answered, known or unknown", async (t) => {
  const { agent } = await world(t);
  await agent.initialize();
  const from = agent.messages.length;
  agent.writeRaw('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope"}}\n');
  agent.writeRaw('{"jsonrpc":"2.0","method":"_example.com/ping","params":{}}\n');
  agent.writeRaw('{"jsonrpc":"2.0","method":"session/cancel"}\n');
  const answer = await agent.rawRequest({ id: "probe", method: "session/list", params: {} });
  assert.ok(answer.result);
  const answers = agent.messages.slice(from).filter((m) => !("method" in m));
  assert.deepEqual(
    answers.map((m) => m.id),
    ["probe"],
  );
});

test("a 33 MiB line gets an error answering its id; the connection stays usable", async (t) => {
  // The shim answers an oversize line itself, before the daemon would see it.
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const from = agent.messages.length;
  const huge = JSON.stringify({
    jsonrpc: "2.0",
    id: "huge",
    method: "session/prompt",
    params: { sessionId, prompt: [{ type: "text", text: "a".repeat(33 * 1024 * 1024) }] },
  });
  agent.writeRaw(`${huge}\n`);
  const err = await agent.waitForLine((m) => m.id === "huge", 20_000, from);
  assert.equal(err.error.code, -32600);
  assert.match(err.error.message, /32 MiB/);
  // An id JavaScript would round comes back as it was written, as every other shim answer does.
  const out = agent.stdoutLines.length;
  agent.writeRaw(`{"jsonrpc":"2.0","id":18446744073709551617,${huge.slice(huge.indexOf('"method"'))}\n`);
  await agent.waitForLine((m) => m.error?.code === -32600, 20_000, agent.messages.indexOf(err) + 1);
  const line = agent.stdoutLines.slice(out).find((l) => l.includes("-32600"));
  assert.ok(line?.startsWith('{"jsonrpc":"2.0","id":18446744073709551617,"error"'), line?.slice(0, 120));
  const list = await agent.rawRequest({ id: "still-here", method: "session/list", params: {} });
  assert.equal(list.result.sessions.length >= 0, true);
  assert.ok((await agent.prompt(sessionId, "small prompt")).stopReason);
});

test("a request id too large for a JavaScript number is answered with the very same id", async (t) => {
  const { agent } = await world(t);
  await agent.initialize();
  const from = agent.stdoutLines.length;
  agent.writeRaw('{"jsonrpc":"2.0","id":18446744073709551617,"method":"session/list","params":{}}\n');
  await agent.waitForLine((m) => m.result?.sessions !== undefined, undefined, agent.messages.length - 1);
  const line = agent.stdoutLines.slice(from).find((l) => l.includes('"sessions"'));
  assert.ok(line?.startsWith('{"jsonrpc":"2.0","id":18446744073709551617,'), line);
});
