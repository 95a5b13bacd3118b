/**
 * session/fork (unstable v1): a new durable session with another's conversation — everything so
 * far, or up to one of its messages (`_meta["reasonix.io"].messageId`) — whose replay and model
 * history both end there, while the parent goes on untouched. The SDK's client has no method for
 * it in the stable entry point, so it goes as a plain JSON-RPC request.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { NO_ANSWER } from "../../daemon/provider/openai-chat.js";
import { AcpWireChecker } from "../support/acp-schema.js";
import type { Agent } from "../support/harness.js";
import type { RecordedRequest } from "../support/scripted-model.js";
import { world, replayOf } from "./fixture.js";

const CHUNKS = ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"];

/** What the model read, without the system prompt: [role, content, tool calls named]. */
const conversation = (r: RecordedRequest) =>
  r.body.messages.slice(1).map((m: any) => [m.role, m.content, ...(m.tool_calls ? [m.tool_calls.map((c: any) => c.function.name)] : [])]);

const texts = (updates: any[]) => updates.filter((u) => CHUNKS.includes(u.sessionUpdate)).map((u) => [u.sessionUpdate, u.content.text]);

/** The window's whole exchange, checked against the unstable schema, the one that has session/fork. */
function assertUnstableWire(agent: Agent): void {
  const checker = new AcpWireChecker({ schemaPath: createRequire(import.meta.url).resolve("@agentclientprotocol/sdk/schema/v1/schema.unstable.json") });
  for (const line of agent.stdinLines) checker.fromClient(line);
  for (const line of agent.stdoutLines) checker.fromAgent(line);
  assert.deepEqual(checker.problems, []);
}

async function twoTurns(t: Parameters<typeof world>[0]) {
  const w = await world(t);
  const init = await w.agent.initialize();
  const { sessionId } = await w.agent.newSession(w.workdir);
  w.model.enqueue({ content: ["first ", "answer"] }, { content: ["second ", "answer"] });
  await w.agent.prompt(sessionId, "first question");
  await w.agent.prompt(sessionId, "second question");
  return { ...w, init, sessionId };
}

const fork = (agent: Agent, params: object) => agent.rpc.request("session/fork", params);

test("a fork of a session with two turns replays both and continues from both; the parent's history has nothing of the fork", async (t) => {
  const { agent, model, workdir, sessionId, init } = await twoTurns(t);
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.fork, { _meta: { "reasonix.io": { messageId: true } } });
  const forked = await fork(agent, { sessionId, cwd: workdir, mcpServers: [] });
  assert.ok(typeof forked.sessionId === "string" && forked.sessionId !== sessionId);
  assert.equal(forked._meta["reasonix.io"].forkedFrom, sessionId);
  assert.equal(forked.modes.currentModeId, "normal");

  const parentReplay = (await replayOf(agent, sessionId, workdir)).filter((u) => CHUNKS.includes(u.sessionUpdate));
  const forkReplay = (await replayOf(agent, forked.sessionId, workdir)).filter((u) => CHUNKS.includes(u.sessionUpdate));
  assert.deepEqual(texts(forkReplay), [
    ["user_message_chunk", "first question"],
    ["agent_message_chunk", "first "],
    ["agent_message_chunk", "answer"],
    ["user_message_chunk", "second question"],
    ["agent_message_chunk", "second "],
    ["agent_message_chunk", "answer"],
  ]);
  assert.deepEqual(forkReplay, parentReplay, "the same messages under the same ids");

  model.enqueue({ content: ["fork answer"] }, { content: ["parent answer"] });
  await agent.prompt(forked.sessionId, "third, in the fork");
  assert.deepEqual(conversation(model.requests.at(-1)!), [
    ["user", "first question"],
    ["assistant", "first answer"],
    ["user", "second question"],
    ["assistant", "second answer"],
    ["user", "third, in the fork"],
  ]);
  await agent.prompt(sessionId, "third, in the parent");
  assert.deepEqual(conversation(model.requests.at(-1)!), [
    ["user", "first question"],
    ["assistant", "first answer"],
    ["user", "second question"],
    ["assistant", "second answer"],
    ["user", "third, in the parent"],
  ]);
  // The system prompt is the parent's: the same folders, the same cached prefix.
  assert.equal(model.requests.at(-1)!.body.messages[0].content, model.requests.at(-2)!.body.messages[0].content);

  // A session like any other: listed, and deleted without touching the parent.
  const listed = await agent.rpc.request("session/list", { cwd: workdir });
  assert.deepEqual(listed.sessions.map((s: { sessionId: string }) => s.sessionId).sort(), [sessionId, forked.sessionId].sort());
  assert.match(listed.sessions.find((s: { sessionId: string }) => s.sessionId === forked.sessionId).title, /\(fork\)$/);
  await agent.rpc.request("session/delete", { sessionId: forked.sessionId });
  const gone = await agent.rawRequest({ id: "gone", method: "session/load", params: { sessionId: forked.sessionId, cwd: workdir, mcpServers: [] } });
  assert.equal(gone.error.code, -32002);
  assert.deepEqual(texts(await replayOf(agent, sessionId, workdir)).slice(6), [
    ["user_message_chunk", "third, in the parent"],
    ["agent_message_chunk", "parent answer"],
  ]);
  assertUnstableWire(agent);
});

test("a fork at the first answer's messageId carries the first turn only, in its replay and in its next request", async (t) => {
  const { agent, model, workdir, sessionId } = await twoTurns(t);
  const answer = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "first ");
  const messageId = answer.messageId;
  const forked = await fork(agent, { sessionId, cwd: workdir, mcpServers: [], _meta: { "reasonix.io": { messageId } } });
  assert.equal(forked._meta["reasonix.io"].messageId, messageId);
  assert.deepEqual(texts(await replayOf(agent, forked.sessionId, workdir)), [
    ["user_message_chunk", "first question"],
    ["agent_message_chunk", "first "],
    ["agent_message_chunk", "answer"],
  ]);
  model.enqueue({ content: ["another second answer"] });
  await agent.prompt(forked.sessionId, "a different second question");
  assert.deepEqual(conversation(model.requests.at(-1)!), [
    ["user", "first question"],
    ["assistant", "first answer"],
    ["user", "a different second question"],
  ]);
  assertUnstableWire(agent);
});

test("a fork at an answer whose tool calls follow leaves the calls out of its history; at a prompt, it ends with the prompt", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["Let me look."], toolCalls: [{ name: "list_directory", arguments: { path: "." } }] }, { content: ["Nothing there."] });
  const prompted = await agent.prompt(sessionId, "what is here?");
  const round = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "Let me look.");

  const atAnswer = await fork(agent, { sessionId, cwd: workdir, _meta: { "reasonix.io": { messageId: round.messageId } } });
  const shown = await replayOf(agent, atAnswer.sessionId, workdir);
  assert.deepEqual(texts(shown), [
    ["user_message_chunk", "what is here?"],
    ["agent_message_chunk", "Let me look."],
  ]);
  assert.ok(!shown.some((u) => u.sessionUpdate === "tool_call"));
  model.enqueue({ content: ["ok"] });
  await agent.prompt(atAnswer.sessionId, "never mind");
  assert.deepEqual(conversation(model.requests.at(-1)!), [
    ["user", "what is here?"],
    ["assistant", "Let me look."],
    ["user", "never mind"],
  ]);

  const atPrompt = await fork(agent, { sessionId, cwd: workdir, _meta: { "reasonix.io": { messageId: prompted._meta["reasonix.io"].userMessageId } } });
  assert.deepEqual(texts(await replayOf(agent, atPrompt.sessionId, workdir)), [["user_message_chunk", "what is here?"]]);
  model.enqueue({ content: ["ok"] });
  await agent.prompt(atPrompt.sessionId, "and now?");
  // Two prompts in a row: the request puts its usual stand-in answer between them.
  assert.deepEqual(conversation(model.requests.at(-1)!), [
    ["user", "what is here?"],
    ["assistant", NO_ANSWER],
    ["user", "and now?"],
  ]);
});

test("a fork during a running turn holds what the parent had committed: the prompt, not the answer still streaming; the parent's turn goes on", async (t) => {
  const { agent, model, workdir, sessionId } = await twoTurns(t);
  let release!: () => void;
  model.enqueue({ content: ["streaming ", "slowly"], holdUntil: new Promise<void>((r) => (release = r)) });
  const running = agent.prompt(sessionId, "third question");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "streaming ");
  const forked = await fork(agent, { sessionId, cwd: workdir });
  release();
  assert.equal((await running).stopReason, "end_turn");
  assert.deepEqual(texts(await replayOf(agent, forked.sessionId, workdir)).at(-1), ["user_message_chunk", "third question"]);
  model.enqueue({ content: ["fork answer"] });
  await agent.prompt(forked.sessionId, "fourth question");
  assert.deepEqual(conversation(model.requests.at(-1)!).slice(-4), [
    ["assistant", "second answer"],
    ["user", "third question"],
    ["assistant", NO_ANSWER],
    ["user", "fourth question"],
  ]);
  assert.match(agent.textOf(sessionId), /streaming slowly/);
});

test("fork refuses an unknown session (-32002), an unknown messageId and a message older than the last compaction (-32602, naming the field)", async (t) => {
  const { agent, model, workdir, sessionId } = await twoTurns(t);
  const missing = await agent.rawRequest({ id: "f1", method: "session/fork", params: { sessionId: "no-such-session", cwd: workdir } });
  assert.equal(missing.error.code, -32002);
  const unknown = await agent.rawRequest({
    id: "f2",
    method: "session/fork",
    params: { sessionId, cwd: workdir, _meta: { "reasonix.io": { messageId: "3f1d7a52-0000-4000-8000-000000000000" } } },
  });
  assert.equal(unknown.error.code, -32602);
  assert.match(unknown.error.message, /_meta\["reasonix\.io"\]\.messageId/);

  const first = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "agent_message_chunk").messageId;
  model.enqueue({ content: ["SUMMARY"] });
  assert.equal((await agent.prompt(sessionId, "/compact")).stopReason, "end_turn");
  const old = await agent.rawRequest({ id: "f3", method: "session/fork", params: { sessionId, cwd: workdir, _meta: { "reasonix.io": { messageId: first } } } });
  assert.equal(old.error.code, -32602);
  assert.match(old.error.message, /_meta\["reasonix\.io"\]\.messageId: .*compaction/);
  // The whole session still forks, and the fork continues from the summary.
  const whole = await fork(agent, { sessionId, cwd: workdir });
  model.enqueue({ content: ["ok"] });
  await agent.prompt(whole.sessionId, "go on");
  assert.match(model.requests.at(-1)!.body.messages[1].content, /SUMMARY/);
});
