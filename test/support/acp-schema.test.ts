import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { AcpWireChecker, acpAjv, type AcpSchema, defRef, defaultSchemaPath, methodDefs, schemaDigest } from "./acp-schema.js";

const j = (msg: unknown) => JSON.stringify(msg);

function checker(): AcpWireChecker {
  return new AcpWireChecker();
}

/** Sends a client request, then the agent's answer; returns the problems it produced. */
function answer(method: string, response: object, params: unknown = {}): string[] {
  const c = checker();
  c.fromClient(j({ jsonrpc: "2.0", id: 7, method, params }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 7, ...response }));
  return c.problems;
}

function agentSends(msg: object): string[] {
  const c = checker();
  c.fromAgent(j({ jsonrpc: "2.0", ...msg }));
  return c.problems;
}

const update = (u: object) => ({ method: "session/update", params: { sessionId: "s1", update: u } });

test("maps methods from the schema annotations", () => {
  const known = checker().knownMethods;
  assert.deepEqual(
    new Set(known.requests),
    new Set([
      "session/request_permission",
      "fs/read_text_file",
      "fs/write_text_file",
      "terminal/create",
      "terminal/output",
      "terminal/release",
      "terminal/wait_for_exit",
      "terminal/kill",
      "elicitation/create",
    ]),
  );
  assert.deepEqual(new Set(known.notifications), new Set(["session/update", "elicitation/complete", "$/cancel_request"]));
  for (const m of [
    "initialize",
    "authenticate",
    "logout",
    "session/new",
    "session/load",
    "session/list",
    "session/delete",
    "session/resume",
    "session/close",
    "session/set_mode",
    "session/set_config_option",
    "session/prompt",
  ]) {
    assert.ok(known.responses.includes(m), m);
  }
});

test("accepts a well-formed conversation", () => {
  const c = checker();
  c.fromClient(j({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } }));
  c.fromAgent(
    j({
      jsonrpc: "2.0",
      id: 0,
      result: {
        protocolVersion: 1,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true },
          _meta: { "reasonix.io": { steer: "_reasonix.io/session/steer" } },
        },
        authMethods: [],
        agentInfo: { name: "reasonix", version: "0.1.0" },
      },
    }),
  );
  c.fromClient(j({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } }));
  c.fromAgent(
    j({ jsonrpc: "2.0", id: 1, result: { sessionId: "s1", modes: { currentModeId: "normal", availableModes: [{ id: "normal", name: "Normal" }] } } }),
  );
  c.fromClient(j({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "s1", prompt: [{ type: "text", text: "hi" }] } }));
  c.fromAgent(j({ jsonrpc: "2.0", ...update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } }) }));
  c.fromAgent(j({ jsonrpc: "2.0", ...update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" }, messageId: "m1" }) }));
  c.fromAgent(
    j({
      jsonrpc: "2.0",
      ...update({
        sessionUpdate: "tool_call",
        toolCallId: "c1",
        title: "Edit a.ts",
        kind: "edit",
        status: "pending",
        locations: [{ path: "/tmp/a.ts", line: 3 }],
        rawInput: { path: "a.ts" },
      }),
    }),
  );
  c.fromAgent(
    j({
      jsonrpc: "2.0",
      id: 0,
      method: "session/request_permission",
      params: {
        sessionId: "s1",
        toolCall: { toolCallId: "c1" },
        options: [
          { optionId: "allow", name: "Allow once", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
    }),
  );
  c.fromClient(j({ jsonrpc: "2.0", id: 0, result: { outcome: { outcome: "selected", optionId: "allow" } } }));
  c.fromAgent(
    j({
      jsonrpc: "2.0",
      ...update({
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "completed",
        content: [
          { type: "diff", path: "/tmp/a.ts", oldText: "a", newText: "b" },
          { type: "content", content: { type: "text", text: "done" } },
        ],
      }),
    }),
  );
  c.fromAgent(j({ jsonrpc: "2.0", ...update({ sessionUpdate: "plan", entries: [{ content: "step", priority: "high", status: "pending" }] }) }));
  c.fromAgent(j({ jsonrpc: "2.0", ...update({ sessionUpdate: "current_mode_update", currentModeId: "plan" }) }));
  c.fromAgent(j({ jsonrpc: "2.0", ...update({ sessionUpdate: "usage_update", used: 1200, size: 128000, cost: { amount: 0.001, currency: "USD" } }) }));
  c.fromAgent(j({ jsonrpc: "2.0", method: "_reasonix.io/anything", params: { free: ["form"] } }));
  c.fromAgent(j({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 0 } }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" } }));
  c.fromClient(j({ jsonrpc: "2.0", id: "x", method: "_unknown/thing", params: {} }));
  c.fromAgent(j({ jsonrpc: "2.0", id: "x", error: { code: -32601, message: "Method not found", data: { method: "_unknown/thing" } } }));
  c.fromClient("this is not json");
  c.fromAgent(j({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
  assert.deepEqual(c.problems, []);
  assert.equal(c.agentMessages, 15);
});

test("flags current_mode_update with modeId instead of currentModeId", () => {
  const problems = agentSends(update({ sessionUpdate: "current_mode_update", modeId: "plan" }));
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /session\/update/);
  assert.match(problems[0]!, /currentModeId/);
});

test("flags a null result to initialize", () => {
  const problems = answer("initialize", { result: null }, { protocolVersion: 1 });
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /initialize result/);
  assert.match(problems[0]!, /InitializeResponse/);
});

test("flags wrong result shapes per method", () => {
  assert.match(answer("session/prompt", { result: { stopReason: "done" } }).join(), /stopReason must be one of .*end_turn/);
  assert.match(answer("session/new", { result: {} }).join(), /sessionId/);
  assert.match(answer("initialize", { result: { protocolVersion: "1" } }).join(), /protocolVersion/);
  assert.match(answer("session/load", { result: null }).join(), /session\/load result/);
  assert.deepEqual(answer("session/load", { result: {} }), []);
  assert.deepEqual(answer("session/set_mode", { result: {} }), []);
});

test("flags malformed tool call content and bad permission requests", () => {
  const bare = agentSends(update({ sessionUpdate: "tool_call", toolCallId: "c", title: "t", content: [{ type: "text", text: "x" }] }));
  assert.equal(bare.length, 1, bare.join("\n"));
  const noOptions = agentSends({ id: 3, method: "session/request_permission", params: { sessionId: "s", toolCall: { toolCallId: "c" } } });
  assert.match(noOptions.join(), /options/);
  const badKind = agentSends({
    id: 4,
    method: "session/request_permission",
    params: { sessionId: "s", toolCall: { toolCallId: "c" }, options: [{ optionId: "a", name: "A", kind: "allow_forever" }] },
  });
  assert.equal(badKind.length, 1);
});

test("flags unknown methods but allows _-prefixed vendor methods", () => {
  assert.match(agentSends({ method: "session/status", params: {} }).join(), /unknown notification method session\/status/);
  assert.match(agentSends({ id: 1, method: "workspace/files", params: {} }).join(), /unknown request method/);
  assert.deepEqual(agentSends({ id: 1, method: "_zed.dev/buffers", params: {} }), []);
  assert.match(
    agentSends({ id: 1, method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "plan", entries: [] } } }).join(),
    /as a request; the schema has it as a notification/,
  );
  assert.match(agentSends({ method: "fs/read_text_file", params: { sessionId: "s", path: "/a" } }).join(), /as a notification/);
});

test("flags JSON-RPC envelope errors", () => {
  const c = checker();
  c.fromAgent("not json at all");
  c.fromAgent("");
  c.fromAgent(j([{ jsonrpc: "2.0", method: "session/update" }]));
  c.fromAgent(j({ id: 1, method: "_x", params: {} }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 99, result: {} }));
  c.fromAgent(j({ jsonrpc: "2.0", params: {} }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 1.5, method: "_x", params: {} }));
  c.fromAgent(j({ jsonrpc: "2.0", method: "_x", params: "text" }));
  assert.equal(c.problems.length, 8, c.problems.join("\n"));
  assert.match(c.problems[0]!, /not JSON/);
  assert.match(c.problems[1]!, /blank line/);
  assert.match(c.problems[2]!, /array/);
  assert.match(c.problems[3]!, /jsonrpc/);
  assert.match(c.problems[4]!, /not an open client request/);
  assert.match(c.problems[5]!, /neither/);
  assert.match(c.problems[6]!, /id 1.5/);
  assert.match(c.problems[7]!, /params must be an object/);
});

test("flags error objects without integer code or string message, and double answers", () => {
  assert.match(answer("session/prompt", { error: { code: "-32603", message: "x" } }).join(), /error.code must be an integer/);
  assert.match(answer("session/prompt", { error: { code: -32603 } }).join(), /error.message must be a string/);
  assert.match(answer("session/prompt", { result: { stopReason: "end_turn" }, error: { code: 1, message: "m" } }).join(), /exactly one/);
  assert.match(answer("session/prompt", {}).join(), /exactly one/);

  const c = checker();
  c.fromClient(j({ jsonrpc: "2.0", id: 5, method: "session/cancel_me", params: {} }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 5, error: { code: -32601, message: "Method not found" } }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 5, error: { code: -32601, message: "Method not found" } }));
  assert.equal(c.problems.length, 1);
  assert.match(c.problems[0]!, /already answered/);
});

test("request ids: string vs number are distinct, reuse while pending is flagged", () => {
  const c = checker();
  c.fromClient(j({ jsonrpc: "2.0", id: "1", method: "session/new", params: { cwd: "/", mcpServers: [] } }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 1, result: { sessionId: "s" } }));
  assert.match(c.problems.join(), /not an open client request/);

  const d = checker();
  const perm = { sessionId: "s", toolCall: { toolCallId: "c" }, options: [{ optionId: "a", name: "A", kind: "allow_once" }] };
  d.fromAgent(j({ jsonrpc: "2.0", id: 0, method: "session/request_permission", params: perm }));
  d.fromAgent(j({ jsonrpc: "2.0", id: 0, method: "session/request_permission", params: perm }));
  assert.match(d.problems.join(), /reuses id 0/);
  d.problems.length = 0;
  d.fromClient(j({ jsonrpc: "2.0", id: 0, result: { outcome: { outcome: "cancelled" } } }));
  d.fromAgent(j({ jsonrpc: "2.0", id: 0, method: "session/request_permission", params: perm }));
  assert.deepEqual(d.problems, []);
});

test("a request without a method still expects an (error) answer", () => {
  const c = checker();
  c.fromClient(j({ jsonrpc: "2.0", id: 12 }));
  c.fromAgent(j({ jsonrpc: "2.0", id: 12, error: { code: -32600, message: "Invalid Request" } }));
  assert.deepEqual(c.problems, []);
});

test("the validators the build writes ahead are the schema's own: same verdicts and errors as compiled here", () => {
  const text = readFileSync(defaultSchemaPath(), "utf8");
  const schema = JSON.parse(text) as AcpSchema;
  const ahead = createRequire(import.meta.url)("./acp-validators.cjs") as Record<string, unknown>;
  assert.equal(ahead.schemaDigest, schemaDigest(text), "written from this very schema");
  const live = acpAjv(schema);
  const samples: unknown[] = [
    {},
    null,
    { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } } },
    { sessionId: "s1", update: { sessionUpdate: "tool_call", toolCallId: "t", title: "x", locations: [{ path: "" }] } },
    { sessionId: 1, update: { sessionUpdate: "nope" } },
    { protocolVersion: 1, agentCapabilities: { loadSession: "yes" }, authMethods: [] },
    { sessionId: "s1", toolCall: { toolCallId: "t" }, options: [{ optionId: "a", name: "Allow", kind: "allow_once" }] },
    { content: [{ type: "resource_link", uri: "", name: "n" }], stopReason: "end_turn" },
  ];
  const names = methodDefs(schema);
  assert.ok(names.length > 20, names.join(","));
  for (const name of names) {
    const fn = ahead[name] as ((v: unknown) => boolean) & { errors?: unknown };
    assert.equal(typeof fn, "function", `${name} written ahead`);
    const compiled = live.getSchema(defRef(name))!;
    for (const v of samples) {
      assert.equal(fn(v), compiled(v), `${name} on ${JSON.stringify(v)}`);
      assert.deepEqual(fn.errors ?? null, compiled.errors ?? null, `${name} errors on ${JSON.stringify(v)}`);
    }
  }
});
