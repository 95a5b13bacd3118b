import { test } from "node:test";
import assert from "node:assert/strict";
import { ShimMemory } from "./memory.js";

test("remembers initialize and open sessions, never prompts; answers settle requests", () => {
  const m = new ShimMemory();
  m.fromEditor('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"terminal":true}}}');
  m.fromEditor('{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"fs","command":"/bin/x","args":[],"env":[]}]}}');
  m.fromEditor('{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}');
  m.fromEditor('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}');
  m.answer({ id: 0, result: {} });
  m.answer({ id: 1, result: { sessionId: "s1" } });
  assert.deepEqual(m.takePending(), [2]);
  const lines = m.rejoinLines().map((l) => JSON.parse(l));
  assert.equal(lines[0].method, "initialize");
  assert.equal(lines[0].params.clientCapabilities.terminal, true);
  assert.match(lines[0].id, /^__reasonix_shim_/);
  assert.deepEqual(lines[1].params, { sessionId: "s1", cwd: "/w", mcpServers: [{ name: "fs", command: "/bin/x", args: [], env: [] }] });
  assert.equal(lines.length, 2, "the prompt is never replayed");
  m.fromEditor('{"jsonrpc":"2.0","id":3,"method":"session/close","params":{"sessionId":"s1"}}');
  m.answer({ id: 3, result: {} });
  assert.equal(m.rejoinLines().length, 1);
  m.fromEditor('{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"s9","cwd":"/x","mcpServers":[]}}');
  m.answer({ id: 4, error: { code: -32002 } });
  assert.equal(m.sessions.has("s9"), false, "a failed load opens nothing");
});

test("ids too large for a JavaScript number are kept as their text: two that round alike stay apart, and the daemon's exact answer settles the right one", () => {
  const m = new ShimMemory();
  const a = '{"jsonrpc":"2.0","id":18446744073709551617,"method":"session/list","params":{}}';
  const b = '{"jsonrpc":"2.0","id":18446744073709551616,"method":"session/list","params":{}}';
  m.fromEditor(a);
  m.fromEditor(b);
  assert.equal(m.pending.size, 2, "both round to 18446744073709552000 as numbers");
  const answer = '{"jsonrpc":"2.0","id":18446744073709551617,"result":{"sessions":[]}}';
  m.answer(JSON.parse(answer), answer);
  const left = m.takePending();
  assert.equal(left.length, 1);
  assert.equal((left[0] as { text: string }).text, "18446744073709551616");
});
