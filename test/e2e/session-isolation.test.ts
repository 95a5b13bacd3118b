/**
 * Sessions share one daemon but not their environments: each session's tools see the window that
 * created it, minus secrets, never another window's variables, the daemon's own, or a provider key.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import { TEST_API_KEY, type Agent } from "../support/harness.js";
import { world } from "./fixture.js";

const secrets = (tag: string) => ({
  FOO_API_KEY: `foo-key-${tag}`,
  MY_SERVICE_TOKEN: `service-token-${tag}`,
  OTHER_SECRET: `other-secret-${tag}`,
  DB_PASSWORD: `db-password-${tag}`,
});

/** Runs `env` in the session through the model and returns what the tool gave back. */
async function envOf(agent: Agent, model: { enqueue(...r: object[]): void; requests: Array<{ body: any }> }, sessionId: string, id: string): Promise<string> {
  model.enqueue({ toolCalls: [{ id, name: "run_command", arguments: { command: "env" } }] }, { content: ["ok"] });
  assert.equal((await agent.prompt(sessionId, `show env ${id}`)).stopReason, "end_turn");
  const answer = model.requests.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === id);
  assert.ok(answer, `the tool result of ${id} reached the model`);
  return String(answer.content);
}

test("two windows with different environments: each session's commands see their own window's plain variables, no other window's, no secret, no provider key", async (t) => {
  const { agent: a, model, workdir, spawn } = await world(t, { env: { WINDOW_A_ONLY: "plain-a", SHARED_NAME: "from-a", ...secrets("a") } });
  await a.initialize();
  const { sessionId: sa } = await a.newSession(workdir);
  // B starts after the daemon (started by A's shim) is running: the daemon's own environment is A's.
  const b = spawn({ env: { WINDOW_B_ONLY: "plain-b", SHARED_NAME: "from-b", ...secrets("b") } });
  await b.initialize();
  const { sessionId: sb } = await b.newSession(workdir);

  const envA = await envOf(a, model, sa, "a1");
  const envB = await envOf(b, model, sb, "b1");
  assert.match(envA, /WINDOW_A_ONLY=plain-a/);
  assert.match(envA, /SHARED_NAME=from-a/);
  assert.doesNotMatch(envA, /WINDOW_B_ONLY|from-b/);
  assert.match(envB, /WINDOW_B_ONLY=plain-b/);
  assert.match(envB, /SHARED_NAME=from-b/);
  assert.doesNotMatch(envB, /WINDOW_A_ONLY|from-a/, "the daemon's own environment (A's) never reaches B's tools");
  for (const text of [envA, envB]) {
    for (const tag of ["a", "b"]) for (const value of Object.values(secrets(tag))) assert.ok(!text.includes(value), `secret ${value} stays out`);
    assert.ok(!text.includes(TEST_API_KEY), "the provider key stays out");
    assert.doesNotMatch(text, /_API_KEY=|_TOKEN=|_SECRET=|_PASSWORD=/);
  }

  // B attaching to A's session changes nothing of A's session.
  await b.rpc.request("session/resume", { sessionId: sa, cwd: workdir, mcpServers: [] });
  const again = await envOf(b, model, sa, "a2");
  assert.match(again, /WINDOW_A_ONLY=plain-a/);
  assert.doesNotMatch(again, /WINDOW_B_ONLY/);

  // Until the user asks: /env reload takes the calling window's environment, and says so.
  assert.equal((await b.prompt(sa, "/env reload")).stopReason, "end_turn");
  assert.match(b.textOf(sa), /Environment reloaded/);
  const reloaded = await envOf(b, model, sa, "a3");
  assert.match(reloaded, /WINDOW_B_ONLY=plain-b/);
  assert.doesNotMatch(reloaded, /WINDOW_A_ONLY/);
  assert.ok(!reloaded.includes("foo-key-b"));
});

test("shellEnvironment in config.json brings back a name it includes and removes one it excludes", async (t) => {
  const { agent, model, workdir } = await world(t, {
    env: { KEEP_THIS_TOKEN: "kept", DROP_ME: "dropped", PLAIN: "plain" },
    prepare: (dir) => writeFileSync(join(dir, "config.json"), JSON.stringify({ shellEnvironment: { include: ["KEEP_*"], exclude: ["DROP_*"] } })),
  });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const env = await envOf(agent, model, sessionId, "c1");
  assert.match(env, /KEEP_THIS_TOKEN=kept/);
  assert.match(env, /PLAIN=plain/);
  assert.doesNotMatch(env, /DROP_ME/);
});

test("vendor traffic only to clients that opted in: a plain client gets no _reasonix.io/ message during a turn with a tool call; an opted-in one gets status updates", async (t) => {
  const { agent: plain, model, workdir, spawn } = await world(t);
  await plain.initialize();
  const { sessionId } = await plain.newSession(workdir);
  const fancy = spawn();
  await fancy.initialize({ clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, _meta: { "reasonix.io": {} } } });
  await fancy.rpc.request("session/resume", { sessionId, cwd: workdir, mcpServers: [] });
  model.enqueue({ toolCalls: [{ name: "list_directory", arguments: {} }] }, { content: ["listed"] });
  assert.equal((await plain.prompt(sessionId, "list it")).stopReason, "end_turn");
  await fancy.waitForLine((m) => m.method === "_reasonix.io/session/status_update" && m.params?.event === "completion");
  assert.ok(
    plain.updatesFor(sessionId).some((u) => u.sessionUpdate === "tool_call"),
    "the turn had a tool call",
  );
  const vendor = plain.messages.filter((m) => typeof m.method === "string" && m.method.startsWith("_reasonix.io/"));
  assert.deepEqual(
    vendor.map((m) => m.method),
    [],
    "the plain client got no vendor message",
  );
  assert.ok(fancy.messages.filter((m) => m.method === "_reasonix.io/session/status_update").length >= 2);
});

test("an editor's error details reach the tool result the model and the user see", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false } });
  agent.onClientRequest = (method) => {
    if (method === "fs/write_text_file") throw new RequestError(-32603, "Internal error", { details: "Permission denied for fs/write_text_file" });
    throw RequestError.methodNotFound(method);
  };
  model.enqueue({ toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "new.txt", content: "x\n" } }] }, { content: ["could not"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "write it")).stopReason, "end_turn");
  const toolMessage = model.requests.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "w1");
  assert.match(String(toolMessage.content), /Permission denied for fs\/write_text_file/);
  const failed = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
  assert.match(JSON.stringify(failed.content), /Permission denied for fs\/write_text_file/);
});
