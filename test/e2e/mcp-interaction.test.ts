/**
 * MCP elicitation through the agent (the specification's opt-in MCP interaction extension): a real
 * stdio MCP server built with the SDK asks the user; what reaches the server is exactly what the
 * user's window answered, through ACP elicitation, the vendor request, or a decline when neither.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, type Agent } from "../support/harness.js";
import { world } from "./fixture.js";

const SERVER = { name: "deployer", command: process.execPath, args: [join(REPO_ROOT, "dist", "test", "support", "fixtures", "elicit-server.js")], env: [] };
const VENDOR_OPT_IN = { "reasonix.io": { mcpInteraction: { supported: true, schemaVersion: 1 } } };

/** Runs the deploy tool in a fresh session and returns what the server reported back to the model. */
async function deploy(agent: Agent, model: { enqueue(...r: object[]): void; requests: Array<{ body: any }> }, workdir: string, tool = "deploy") {
  const { sessionId } = await agent.newSession(workdir, { mcpServers: [SERVER] });
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  const id = `call-${Math.random().toString(36).slice(2)}`;
  model.enqueue({ toolCalls: [{ id, name: `mcp__deployer__${tool}`, arguments: {} }] }, { content: ["done"] });
  assert.equal((await agent.prompt(sessionId, `run ${tool}`)).stopReason, "end_turn");
  const answer = model.requests.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === id);
  const said = /elicitation result: (.*)$/.exec(String(answer?.content))?.[1];
  // Under two suites' load the server once answered after the first turn's wait (the model read "no
  // tool named"); the harness now waits longer (agentEnv). What the model read says why, if ever again.
  assert.ok(said !== undefined, `${tool}: the tool's answer held no elicitation result: ${String(answer?.content).slice(0, 500)}`);
  return { sessionId, result: JSON.parse(said) };
}

test("a client that offers ACP elicitation answers accept, decline and cancel, and the server receives exactly that", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { elicitation: { form: {}, url: {} } } });
  const asked: any[] = [];
  let reply: object = {};
  agent.onClientRequest = (method, params) => {
    if (method !== "elicitation/create") throw new Error(`unexpected ${method}`);
    asked.push(params);
    return reply;
  };
  await agent.initialize();
  reply = { action: "accept", content: { environment: "staging", replicas: 2 } };
  assert.deepEqual((await deploy(agent, model, workdir)).result, { action: "accept", content: { environment: "staging", replicas: 2 } });
  assert.equal(asked[0].mode, "form");
  assert.equal(asked[0].message, "Deploy to which environment?");
  assert.deepEqual(asked[0].requestedSchema.required, ["environment"]);
  reply = { action: "decline" };
  assert.deepEqual((await deploy(agent, model, workdir)).result, { action: "decline" });
  reply = { action: "cancel" };
  assert.deepEqual((await deploy(agent, model, workdir)).result, { action: "cancel" });
  // Content that does not fit the schema the server asked with is a cancel, not a bad answer.
  reply = { action: "accept", content: { environment: "the moon" } };
  assert.deepEqual((await deploy(agent, model, workdir)).result, { action: "cancel" });
  // A URL flow: the window only agrees to open it; nothing typed travels as content.
  reply = { action: "accept", content: { password: "hunter2" } };
  assert.deepEqual((await deploy(agent, model, workdir, "login")).result, { action: "accept" });
  assert.equal(asked.at(-1).mode, "url");
  assert.equal(asked.at(-1).url, "https://auth.example/login?state=abc");
});

test("a client opted in through _reasonix.io gets _reasonix.io/mcp/request_interaction; a load replays the decision", async (t) => {
  const { agent, model, workdir, spawn } = await world(t, { clientCapabilities: { _meta: VENDOR_OPT_IN } });
  const init = await agent.initialize();
  assert.deepEqual(init.agentCapabilities._meta["reasonix.io"].mcpInteraction, {
    supported: true,
    schemaVersion: 1,
    method: "_reasonix.io/mcp/request_interaction",
  });
  const asked: any[] = [];
  agent.onClientRequest = (method, params) => {
    assert.equal(method, "_reasonix.io/mcp/request_interaction");
    asked.push(params);
    return { action: "accept", content: { environment: "production" } };
  };
  const { sessionId, result } = await deploy(agent, model, workdir);
  assert.deepEqual(result, { action: "accept", content: { environment: "production" } });
  assert.equal(asked[0].sessionId, sessionId);
  assert.equal(asked[0].server, "deployer");
  assert.equal(asked[0].mode, "form");
  assert.ok(asked[0].turnId && asked[0].promptId, "the request names its turn");
  await agent.closeStdin();

  const later = spawn();
  await later.initialize();
  const from = later.messages.length;
  await later.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  const replayed = later.messages
    .slice(from)
    .filter((m) => m.method === "session/update")
    .map((m) => m.params.update);
  const decision = replayed.find((u) => u._meta?.["reasonix.io"]?.kind === "mcp_interaction");
  assert.ok(decision, "the decision is in the replay");
  assert.equal(decision._meta["reasonix.io"].action, "accept");
  assert.doesNotMatch(JSON.stringify(replayed), /"production"/, "what the user typed stays out of the ledger");
});

test("a client with neither: the server's question is declined at once, the tool call finishes, nothing hangs", async (t) => {
  const { agent, model, workdir } = await world(t);
  agent.onClientRequest = (method) => {
    throw new Error(`no request expected, got ${method}`);
  };
  await agent.initialize();
  assert.deepEqual((await deploy(agent, model, workdir)).result, { action: "decline" });
  assert.ok(!agent.agentRequests.some((r) => r.method.includes("elicitation") || r.method.includes("interaction")));
});
