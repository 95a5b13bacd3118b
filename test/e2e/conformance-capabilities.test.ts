/**
 * The CAPABILITY requirements of the official ACP conformance kit (acp-tck, v1 ids) that this
 * agent's advertised capabilities make applicable, one test each, named by id. Like the kit, the
 * client here advertises nothing beyond the defaults. Every test's teardown also validates each
 * message the agent sent against the v1 schema. Not applicable, because not advertised: PROMPTCAP-001
 * (images) and PROMPTCAP-002 (audio) — DeepSeek's chat API takes neither. Advertised without a kit
 * requirement: `sessionCapabilities.fork` (unstable v1), tested in fork.test.ts.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Agent } from "../support/harness.js";
import { world, test } from "./fixture.js";

const STOP_REASONS = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"];

/** Messages after `from` that are session/update notifications of `sessionId`. */
const updatesOf = (agent: Agent, sessionId: string, from: number, to = agent.messages.length) =>
  agent.messages.slice(from, to).filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId);

async function sessionWithHistory(t: Parameters<typeof world>[0]) {
  const w = await world(t);
  const init = await w.agent.initialize();
  const { sessionId } = await w.agent.newSession(w.workdir);
  w.model.enqueue({ content: ["an ", "answer"] });
  await w.agent.prompt(sessionId, "a question");
  await w.agent.closeStdin();
  const other = w.spawn();
  await other.initialize();
  return { ...w, init, sessionId, other };
}

test("ACP-LOAD-001: session/load with a valid sessionId, cwd and mcpServers succeeds with a LoadSessionResponse", async (t) => {
  const { init, sessionId, other, workdir } = await sessionWithHistory(t);
  assert.equal(init.agentCapabilities.loadSession, true);
  const r = await other.rawRequest({ id: "load", method: "session/load", params: { sessionId, cwd: workdir, mcpServers: [] } });
  assert.ok(r.result && typeof r.result === "object");
});

test("ACP-LOAD-002: every update of the load's replay arrives before its response, none after", async (t) => {
  const { sessionId, other, workdir } = await sessionWithHistory(t);
  const from = other.messages.length;
  const r = await other.rawRequest({ id: "load", method: "session/load", params: { sessionId, cwd: workdir, mcpServers: [] } });
  const at = other.messages.indexOf(r);
  assert.ok(updatesOf(other, sessionId, from, at).length > 0, "the replay came before the answer");
  // Anything still on its way would arrive before the answer to a request sent after it.
  await other.rawRequest({ id: "after", method: "session/list", params: {} });
  assert.deepEqual(updatesOf(other, sessionId, at + 1), []);
});

test("ACP-RESUME-001/002: session/resume without mcpServers succeeds, and no history arrives before its answer", async (t) => {
  const { init, sessionId, other, workdir } = await sessionWithHistory(t);
  assert.ok(init.agentCapabilities.sessionCapabilities.resume);
  const from = other.messages.length;
  const r = await other.rawRequest({ id: "resume", method: "session/resume", params: { sessionId, cwd: workdir } });
  assert.ok(r.result && typeof r.result === "object", JSON.stringify(r.error));
  const history = updatesOf(other, sessionId, from, other.messages.indexOf(r)).filter((m) =>
    ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"].includes(m.params.update.sessionUpdate),
  );
  assert.deepEqual(history, []);
});

test("ACP-LIST-001/002: session/list with {} returns a sessions array; a cwd no session uses returns []", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  await agent.newSession(workdir);
  const all = await agent.rawRequest({ id: "l1", method: "session/list", params: {} });
  assert.ok(Array.isArray(all.result.sessions));
  const none = await agent.rawRequest({ id: "l2", method: "session/list", params: { cwd: join(workdir, "nobody-works-here") } });
  assert.deepEqual(none.result.sessions, []);
});

test("ACP-DELETE-001: session/delete of a session created on the connection succeeds with {}", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.deepEqual((await agent.rawRequest({ id: "del", method: "session/delete", params: { sessionId } })).result, {});
});

test("ACP-CLOSE-001: session/close of an idle session succeeds with {}", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.deepEqual((await agent.rawRequest({ id: "close", method: "session/close", params: { sessionId } })).result, {});
});

test("ACP-CLOSE-002: session/close during a prompt cancels it: the prompt ends cancelled", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["working "], hang: true });
  const pending = agent.prompt(sessionId, "long work");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  await agent.rpc.request("session/close", { sessionId });
  assert.equal((await pending).stopReason, "cancelled");
});

test("ACP-ADDDIRS-001: session/new with an absolute additionalDirectories entry is accepted", async (t) => {
  const { agent, workdir } = await world(t);
  const init = await agent.initialize();
  assert.ok(init.agentCapabilities.sessionCapabilities.additionalDirectories);
  const r = await agent.rawRequest({ id: "dirs", method: "session/new", params: { cwd: workdir, mcpServers: [], additionalDirectories: ["/tmp"] } });
  assert.ok(r.result?.sessionId, JSON.stringify(r.error));
});

test("ACP-MODES-001/002: modes are valid with currentModeId among them; set_mode to another succeeds and its update carries currentModeId", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId, modes } = await agent.newSession(workdir);
  const ids = modes.availableModes.map((m: { id: string }) => m.id);
  assert.ok(ids.includes(modes.currentModeId));
  const other = ids.find((id: string) => id !== modes.currentModeId);
  const from = agent.updates.length;
  await agent.rpc.request("session/set_mode", { sessionId, modeId: other });
  const echo = agent.updatesFor(sessionId, from).find((u) => u.sessionUpdate === "current_mode_update");
  if (echo) assert.equal(echo.currentModeId, other);
});

test("ACP-CONFIG-001/002: every config option's currentValue is one of its options; set_config_option answers the complete list with the change", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId, configOptions } = await agent.newSession(workdir);
  const values = (o: { options: Array<{ value?: string; options?: Array<{ value: string }> }> }) =>
    o.options.flatMap((x) => (x.options ? x.options.map((y) => y.value) : [x.value]));
  for (const option of configOptions) {
    assert.equal(option.type, "select", "no boolean options: the client did not offer them (CONFIG-003)");
    assert.ok(values(option).includes(option.currentValue), option.id);
  }
  const effort = configOptions.find((o: { id: string }) => o.id === "effort");
  const next = values(effort).find((v: string | undefined) => v !== effort.currentValue);
  const answer = await agent.rpc.request("session/set_config_option", { sessionId, configId: "effort", value: next });
  assert.deepEqual(
    answer.configOptions.map((o: { id: string }) => o.id),
    configOptions.map((o: { id: string }) => o.id),
  );
  assert.equal(answer.configOptions.find((o: { id: string }) => o.id === "effort").currentValue, next);
});

test("ACP-PROMPTCAP-003: with embeddedContext advertised, a prompt with an embedded resource beside text ends with a defined stopReason", async (t) => {
  const { agent, model, workdir } = await world(t);
  const init = await agent.initialize();
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(init.agentCapabilities.promptCapabilities.image, false, "not offered: see the file's comment");
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["read it"] });
  const r = await agent.prompt(sessionId, [
    { type: "text", text: "look at this" },
    { type: "resource", resource: { uri: "file:///tmp/notes.txt", mimeType: "text/plain", text: "the notes" } },
  ]);
  assert.ok(STOP_REASONS.includes(r.stopReason));
  assert.match(JSON.stringify(model.requests.at(-1)!.body.messages.at(-1)), /the notes/);
});

test("ACP-AUTH-004: with auth.logout advertised, logout succeeds with an object and forgets the stored keys", async (t) => {
  const { agent, home } = await world(t);
  const init = await agent.initialize();
  assert.deepEqual(init.agentCapabilities.auth.logout, {});
  const stored = join(home.dir, "credentials.json");
  writeFileSync(stored, JSON.stringify({ DEEPSEEK_API_KEY: "sk-stored" }), { mode: 0o600 });
  assert.deepEqual((await agent.rawRequest({ id: "out", method: "logout", params: {} })).result, {});
  assert.equal(existsSync(stored), false);
});
