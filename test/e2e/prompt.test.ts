import assert from "node:assert/strict";
import { TEST_API_KEY } from "../support/harness.js";
import { world, test } from "./fixture.js";

test("a prompt streams reasoning as thought chunks, then text as message chunks, then end_turn", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({
    reasoning: ["Let me ", "think."],
    content: ["Hello", ", ", "world!"],
    usage: { prompt_tokens: 20, completion_tokens: 7, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: 20 },
  });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const result = await agent.prompt(sessionId, "Say hello to the world");
  assert.equal(result.stopReason, "end_turn");

  const chunks = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "agent_thought_chunk" || u.sessionUpdate === "agent_message_chunk")
    .map((u) => [u.sessionUpdate, u.content.text]);
  assert.deepEqual(chunks, [
    ["agent_thought_chunk", "Let me "],
    ["agent_thought_chunk", "think."],
    ["agent_message_chunk", "Hello"],
    ["agent_message_chunk", ", "],
    ["agent_message_chunk", "world!"],
  ]);

  assert.equal(model.requests.length, 1);
  const body = model.requests[0]!.body;
  assert.equal(body.stream, true);
  assert.equal(body.model, "deepseek-v4-flash");
  assert.equal(body.messages[0].role, "system");
  assert.deepEqual(body.messages.at(-1), { role: "user", content: "Say hello to the world" });
  assert.equal(model.requests[0]!.headers.authorization, `Bearer ${TEST_API_KEY}`);
});

test("embedded text resources reach the model with their URI; the next turn repeats the first as its prefix", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ content: ["first"] }, { content: ["second"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, [
    { type: "text", text: "Explain this file" },
    { type: "resource", resource: { uri: "file:///w/a.ts", mimeType: "text/x-typescript", text: "export const a = 1;" } },
    { type: "resource_link", uri: "file:///w/b.ts", name: "b.ts" },
  ]);
  const user = model.requests[0]!.body.messages.at(-1);
  assert.equal(user.role, "user");
  assert.match(user.content, /Explain this file/);
  assert.match(user.content, /<resource uri="file:\/\/\/w\/a\.ts">\nexport const a = 1;\n<\/resource>/);
  assert.match(user.content, /\[b\.ts\]\(file:\/\/\/w\/b\.ts\)/);

  await agent.prompt(sessionId, "and now?");
  const first = model.requests[0]!.body.messages;
  const second = model.requests[1]!.body.messages;
  assert.deepEqual(second.slice(0, first.length), first);
  assert.deepEqual(second[first.length], { role: "assistant", content: "first" });
  assert.deepEqual(second.at(-1), { role: "user", content: "and now?" });
});

test("cancel: the prompt answers cancelled, never an error, and no update of that turn follows", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ content: Array.from({ length: 200 }, (_, i) => `w${i} `), chunkDelayMs: 20 });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const pending = agent.prompt(sessionId, "write a long story");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  await agent.cancel(sessionId);
  const result = await pending;
  assert.equal(result.stopReason, "cancelled");

  const answerAt = agent.messages.findIndex((m) => m.result?.stopReason === "cancelled");
  assert.ok(answerAt > 0);
  // A stray chunk would already be on the wire ahead of the answer to a request sent now.
  await agent.rpc.request("session/list", {});
  const after = agent.messages.slice(answerAt + 1).filter((m) => m.method === "session/update" && m.params.sessionId === sessionId);
  assert.deepEqual(after, []);
  const streamed = agent.textOf(sessionId);
  assert.ok(streamed.length > 0 && !streamed.includes("w199"));

  // The session goes on: the next prompt works and its request holds the cancelled turn's user message.
  model.enqueue({ content: ["fine"] });
  assert.equal((await agent.prompt(sessionId, "shorter please")).stopReason, "end_turn");
  const messages = model.requests.at(-1)!.body.messages;
  assert.ok(messages.some((m: { role: string; content: string }) => m.role === "user" && m.content === "write a long story"));
});

test("no API key: the prompt fails with -32000 pointing to reasonix setup; the session stays usable", async (t) => {
  const { agent, workdir } = await world(t, { noModel: true });
  const init = await agent.initialize({ clientCapabilities: { auth: { terminal: true } } });
  assert.equal(init.authMethods[0].type, "terminal");
  assert.deepEqual(init.authMethods[0].args, ["setup"]);
  const { sessionId } = await agent.newSession(workdir);
  await assert.rejects(agent.prompt(sessionId, "hi"), (e: { code: number; message: string }) => {
    assert.equal(e.code, -32000);
    assert.match(e.message, /reasonix setup/);
    assert.match(e.message, /DEEPSEEK_API_KEY/);
    return true;
  });
});

test("a provider error is -32603 with one sentence that never contains the key", async (t) => {
  const { agent, model, workdir, home } = await world(t, { env: { REASONIX_MODEL_RETRIES: "1", REASONIX_MODEL_RETRY_BASE_SECONDS: "0.01" } });
  model.enqueue({ status: 401, errorBody: { error: { message: `Incorrect API key provided: ${TEST_API_KEY}`, type: "authentication_error" } } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await assert.rejects(agent.prompt(sessionId, "hi"), (e: { code: number; message: string }) => {
    assert.equal(e.code, -32603);
    assert.match(e.message, /HTTP 401/);
    assert.ok(!e.message.includes(TEST_API_KEY), e.message);
    assert.ok(!e.message.includes("\n"));
    return true;
  });
  // A server error is retried (here once), then reported the same way.
  model.enqueue({ status: 500 }, { status: 500 });
  await assert.rejects(agent.prompt(sessionId, "again"), (e: { code: number }) => e.code === -32603);
  model.enqueue({ content: ["recovered"] });
  assert.equal((await agent.prompt(sessionId, "third")).stopReason, "end_turn");
  assert.ok(!agent.stdoutLines.join("\n").includes(TEST_API_KEY));
  assert.ok(!agent.daemonLog().includes(TEST_API_KEY));
  void home;
});

test("through shim and daemon, two sessions streaming at once in one window each get every chunk in order, and a replay holds the same order", async (t) => {
  const { agent, model, workdir, spawn } = await world(t);
  const N = 150;
  model.respond = (req) => {
    const tag = JSON.stringify(req.body.messages.at(-1).content).includes("one") ? "one" : "two";
    return { content: Array.from({ length: N }, (_, i) => `${tag}-${i} `), chunkDelayMs: 1 };
  };
  await agent.initialize();
  const { sessionId: s1 } = await agent.newSession(workdir);
  const { sessionId: s2 } = await agent.newSession(workdir);
  const [r1, r2] = await Promise.all([agent.prompt(s1, "stream one"), agent.prompt(s2, "stream two")]);
  assert.equal(r1.stopReason, "end_turn");
  assert.equal(r2.stopReason, "end_turn");
  const texts = (updates: Array<{ sessionUpdate: string; content?: { text?: string } }>): string[] =>
    updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content?.text ?? "");
  const expected = (tag: string): string[] => Array.from({ length: N }, (_, i) => `${tag}-${i} `);
  assert.deepEqual(texts(agent.updatesFor(s1)), expected("one"));
  assert.deepEqual(texts(agent.updatesFor(s2)), expected("two"));
  // What the windows were sent is what the ledger kept, in the same order: a second window's replay.
  const second = spawn();
  await second.initialize();
  const answer = await second.rawRequest({ id: "load", method: "session/load", params: { sessionId: s1, cwd: workdir, mcpServers: [] } });
  assert.ok(answer.result, JSON.stringify(answer.error));
  const replay = second.messages.slice(0, second.messages.indexOf(answer)).filter((m) => m.method === "session/update");
  assert.deepEqual(texts(replay.map((m) => m.params.update)), expected("one"));
});
