/**
 * ACP message ids: every user, agent and thought chunk names the message it belongs to, the same
 * live, replayed and in another window, so a client can group chunks into messages and drop what
 * it already shows.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { world, replayOf } from "./fixture.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CHUNKS = ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"];
const isChunk = (u: { sessionUpdate: string }) => CHUNKS.includes(u.sessionUpdate);

test("every chunk carries its message's id, live and replayed alike; a round's thought and answer, two rounds, two turns and a command's answer are different messages", async (t) => {
  const { agent, model, workdir, spawn } = await world(t);
  model.enqueue(
    { reasoning: ["let me ", "look"], content: ["Looking ", "around."], toolCalls: [{ name: "list_directory", arguments: { path: "." } }] },
    { content: ["Nothing ", "here."] },
    { reasoning: ["again"], content: ["Second ", "turn."] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const first = await agent.prompt(sessionId, "look around");
  const second = await agent.prompt(sessionId, "once more");
  const third = await agent.prompt(sessionId, "/help");
  const live = agent.updatesFor(sessionId).filter(isChunk);
  for (const u of live) assert.match(String(u.messageId), UUID, JSON.stringify(u));

  const idsOf = (kind: string, text: string) => new Set(live.filter((u) => u.sessionUpdate === kind && text.includes(u.content.text)).map((u) => u.messageId));
  const thought1 = idsOf("agent_thought_chunk", "let me look");
  const answer1 = idsOf("agent_message_chunk", "Looking around.");
  const answer2 = idsOf("agent_message_chunk", "Nothing here.");
  const thought3 = idsOf("agent_thought_chunk", "again");
  const answer3 = idsOf("agent_message_chunk", "Second turn.");
  for (const ids of [thought1, answer1, answer2, thought3, answer3]) assert.equal(ids.size, 1, "every chunk of one message shares its id");
  const all = [thought1, answer1, answer2, thought3, answer3].map((s) => [...s][0]);
  assert.equal(new Set(all).size, 5, "thought and answer, two rounds and two turns: five messages");
  const help = live.filter((u) => u.sessionUpdate === "agent_message_chunk" && u._meta?.["reasonix.io"]?.kind === "command");
  assert.equal(help.length, 1);
  assert.ok(!all.includes(help[0].messageId), "a command's answer is a message of its own");

  // Another window loads the session: the same chunks under the same ids, and the prompts under the ids their answers named.
  const other = spawn();
  await other.initialize();
  const replayed = (await replayOf(other, sessionId, workdir)).filter(isChunk);
  assert.deepEqual(
    replayed.filter((u) => u.sessionUpdate !== "user_message_chunk"),
    live,
  );
  const prompts = replayed.filter((u) => u.sessionUpdate === "user_message_chunk");
  assert.deepEqual(
    prompts.map((u) => [u.content.text, u.messageId]),
    [
      ["look around", first._meta["reasonix.io"].userMessageId],
      ["once more", second._meta["reasonix.io"].userMessageId],
      ["/help", third._meta["reasonix.io"].userMessageId],
    ],
  );
  assert.equal(new Set(prompts.map((u) => u.messageId)).size, 3);
  // A second replay names every message as the first did.
  assert.deepEqual(await replayOf(other, sessionId, workdir).then((us) => us.filter(isChunk)), replayed);
});

test("a prompt from window A reaches window B as one user message, under the id A's replay shows and A's answer names", async (t) => {
  const { agent: a, model, workdir, window } = await world(t);
  await a.initialize();
  const { sessionId } = await a.newSession(workdir);
  const b = await window(sessionId);
  model.enqueue({ content: ["read it"] });
  const from = b.updates.length;
  const answer = await a.prompt(sessionId, [
    { type: "text", text: "look at this" },
    { type: "resource", resource: { uri: "file:///tmp/notes.txt", mimeType: "text/plain", text: "the notes" } },
  ]);
  await b.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk", undefined, from);
  const seen = b.updatesFor(sessionId, from).filter((u) => u.sessionUpdate === "user_message_chunk");
  assert.equal(seen.length, 2, "both blocks");
  const id = answer._meta["reasonix.io"].userMessageId;
  assert.match(id, UUID);
  assert.deepEqual(
    seen.map((u) => u.messageId),
    [id, id],
  );
  const replayed = (await replayOf(a, sessionId, workdir)).filter((u) => u.sessionUpdate === "user_message_chunk");
  assert.deepEqual(replayed, seen);
});

test("a prompt that names its message (the message-id RFD's draft) keeps that id; a malformed one is replaced", async (t) => {
  const { agent, model, workdir, window } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const b = await window(sessionId);
  model.enqueue({ content: ["one"] }, { content: ["two"] });
  const mine = "0b6c1f0e-8f1e-4c59-9a51-2d6a4c7b9e10";
  const named = await agent.rpc.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "named" }], messageId: mine });
  assert.equal(named._meta["reasonix.io"].userMessageId, mine);
  const odd = await agent.rpc.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "odd" }], messageId: "not a uuid" });
  assert.match(odd._meta["reasonix.io"].userMessageId, UUID);
  await b.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "two");
  assert.deepEqual(
    b
      .updatesFor(sessionId)
      .filter((u) => u.sessionUpdate === "user_message_chunk")
      .map((u) => [u.content.text, u.messageId]),
    [
      ["named", mine],
      ["odd", odd._meta["reasonix.io"].userMessageId],
    ],
  );
});
