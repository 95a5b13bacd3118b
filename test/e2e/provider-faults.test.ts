/**
 * The provider failing in the ways real ones do (issue 16, item 3): a stream cut without a finish,
 * a dropped connection, 429 and 5xx with and without Retry-After, an HTML page where the event stream
 * should be, a stream that stalls. Each ends in a retry with a visible notice or an error that says
 * what happened, and the session takes the next prompt.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { seconds } from "../../daemon/provider/faults.js";
import { busyBound } from "../support/busy.js";
import { refusedPort } from "../support/ports.js";
import { world } from "./fixture.js";

/**
 * Short waits so no test sleeps for real: a 10 ms backoff base. The idle watchdog keeps a bound no
 * busy machine reaches (yet a hang still ends within the test): a short one fired on good replies
 * whenever this process waited for a CPU, and spent the one retry a cut stream gets.
 */
const FAST = { REASONIX_MODEL_RETRY_BASE_SECONDS: "0.01", REASONIX_MODEL_IDLE_TIMEOUT_SECONDS: "30" };

const messageText = (agent: { updatesFor(id: string): any[] }, sessionId: string): string =>
  agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");

const rejectsWith = (re: RegExp) => (e: { code: number; message: string }) => {
  assert.equal(e.code, -32603);
  assert.match(e.message, re);
  assert.doesNotMatch(e.message, /could not reach/i);
  return true;
};

test("a stream cut before anything was shown is tried again once, with a notice; cut again after text, the turn fails and keeps the text marked", async (t) => {
  const { agent, model, workdir, spawn } = await world(t, { env: FAST });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);

  model.enqueue({ cutShort: true }, { content: ["recovered"] });
  assert.equal((await agent.prompt(sessionId, "one")).stopReason, "end_turn");
  assert.equal(model.requests.length, 2);
  assert.match(messageText(agent, sessionId), /\[notice\] The model provider at 127\.0\.0\.1:\d+ closed the stream early.*Trying again now \(try 2 of 5\)/);
  assert.match(messageText(agent, sessionId), /recovered$/);

  // Text was shown: not tried again (the user would see it twice); the partial text stays, marked.
  model.enqueue({ content: ["half an ", "answer"], cutShort: true });
  await assert.rejects(agent.prompt(sessionId, "two"), rejectsWith(/closed the stream early/));
  assert.equal(model.requests.length, 3);
  assert.match(messageText(agent, sessionId), /half an answer\n\n\[error\] The model provider at .* closed the stream early/);

  // A dropped connection mid-answer is the same fault, in the same words.
  model.enqueue({ content: ["dropped ", "here"], dropConnection: true, chunkDelayMs: 20 });
  await assert.rejects(agent.prompt(sessionId, "three"), rejectsWith(/closed the stream early/));
  assert.equal(model.requests.length, 4);

  // A stream that ends with [DONE] but no finish_reason (some servers send none) was finished, not cut.
  model.enqueue({ content: ["fine"], omitFinish: true });
  assert.equal((await agent.prompt(sessionId, "four")).stopReason, "end_turn");
  assert.equal(model.requests.length, 5, "not tried again");
  const sent = model.requests.at(-1)!.body.messages.slice(1) as Array<{ role: string; content: string }>;
  assert.deepEqual(
    sent.map((m) => m.role),
    ["user", "assistant", "user", "assistant", "user", "assistant", "user"],
    "each broken answer is an assistant message of its own: the history stays well-formed",
  );
  assert.match(sent[3]!.content, /^half an answer\n\n\[This answer is incomplete: the provider stopped the stream/);
  assert.match(sent[5]!.content, /^dropped here\n\n\[This answer is incomplete/);
  // The ledger keeps the mark: a window that loads the session sees the same.
  const late = spawn();
  await late.initialize();
  await late.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  assert.match(messageText(late, sessionId), /half an answer\n\n\[error\] The model provider .* closed the stream early/);
});

test("429 and 5xx are tried again with exponential backoff honouring Retry-After, announced, and bounded", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { ...FAST, REASONIX_MODEL_RETRIES: "2" } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);

  model.enqueue({ status: 429, headers: { "retry-after": "1" } }, { status: 503 }, { content: ["served"] });
  assert.equal((await agent.prompt(sessionId, "busy?")).stopReason, "end_turn");
  assert.equal(model.requests.length, 3);
  const text = messageText(agent, sessionId);
  assert.match(text, /\[notice\] The model provider at .* answered HTTP 429 \(rate limited\): .* Trying again in 1 s \(try 2 of 3\)/);
  assert.match(text, /\[notice\] .* answered HTTP 503: .* Trying again in 20 ms \(try 3 of 3\)/, "base 10 ms, doubled");
  assert.match(text, /served$/);

  // Bounded: three tries, then the last error, saying how many tries it took.
  model.enqueue({ status: 500 }, { status: 502 }, { status: 500 });
  await assert.rejects(agent.prompt(sessionId, "still busy?"), rejectsWith(/answered HTTP 500: .*Tried 3 times\.$/));
  assert.equal(model.requests.length, 6);

  // A provider that asks for longer than a turn waits (modelRetry.maxSeconds, 60) is not waited for.
  model.requests.length = 0;
  model.enqueue({ status: 429, headers: { "retry-after": "3600" } });
  await assert.rejects(agent.prompt(sessionId, "later?"), rejectsWith(/HTTP 429 .* asked to wait 3600 s, longer than the 60 s a turn waits/));
  assert.equal(model.requests.length, 1);

  // A 4xx other than 429 is not retried.
  model.enqueue({ status: 400 });
  await assert.rejects(agent.prompt(sessionId, "bad"), rejectsWith(/HTTP 400/));
  assert.equal(model.requests.length, 2);
  assert.equal((await agent.prompt(sessionId, "ok now")).stopReason, "end_turn", "model.pending consumed; the session goes on");
});

test("an HTTP 200 that is not an event stream is an error naming what came back, not an empty answer", async (t) => {
  const { agent, model, workdir } = await world(t, { env: FAST });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({
    body: {
      contentType: "text/html; charset=utf-8",
      text: "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>checking your browser</body></html>",
    },
  });
  await assert.rejects(
    agent.prompt(sessionId, "hi"),
    rejectsWith(/answered HTTP 200 with an HTML page \("Just a moment\.\.\."\) instead of an event stream; check the provider's baseUrl/),
  );
  assert.equal(model.requests.length, 1, "a wrong body does not fix itself: no retry");
  model.enqueue({ body: { contentType: "application/json", text: JSON.stringify({ error: { message: "quota exhausted" } }) } });
  await assert.rejects(agent.prompt(sessionId, "hi"), rejectsWith(/HTTP 200 with a JSON error \("quota exhausted"\)/));
  model.enqueue({ body: { contentType: "text/plain", text: "upstream connect error" } });
  await assert.rejects(agent.prompt(sessionId, "hi"), rejectsWith(/HTTP 200 with text\/plain content/));
  // Judged by what came, not by the label: an event stream sent as text/plain is read as one.
  const chunk = {
    id: "c",
    object: "chat.completion.chunk",
    created: 0,
    model: "m",
    choices: [{ index: 0, delta: { content: "labelled wrong" }, finish_reason: "stop" }],
  };
  model.enqueue({ body: { contentType: "text/plain", text: `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n` } });
  assert.equal((await agent.prompt(sessionId, "mislabelled")).stopReason, "end_turn");
  assert.match(messageText(agent, sessionId), /labelled wrong$/);

  // An error event inside the stream, after text was shown, is named as such.
  model.enqueue({ content: ["start "], streamError: { message: "Server overloaded", type: "server_error", code: null }, chunkDelayMs: 10 });
  await assert.rejects(agent.prompt(sessionId, "hi"), rejectsWith(/reported an error in the middle of the stream: Server overloaded/));
  assert.equal((await agent.prompt(sessionId, "again")).stopReason, "end_turn");
});

test("a stalled stream is stopped by the idle watchdog: tried again when nothing was shown, else an error that keeps the text", async (t) => {
  // 300 ms on a quiet machine, more on a busy one: the good replies here must not look silent.
  const idleMs = busyBound(300);
  const { agent, model, workdir } = await world(t, { env: { ...FAST, REASONIX_MODEL_IDLE_TIMEOUT_SECONDS: String(idleMs / 1000) } });
  const silent = `sent nothing for ${seconds(idleMs).replace(".", "\\.")}`;
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);

  // Silent before its headers: nothing shown, so tried once more.
  model.enqueue({ silent: true }, { content: ["awake"] });
  assert.equal((await agent.prompt(sessionId, "anyone?")).stopReason, "end_turn");
  assert.equal(model.requests.length, 2);
  assert.match(
    messageText(agent, sessionId),
    new RegExp(`\\[notice\\] The model provider at .* ${silent}, so the stream was stopped \\(modelIdleTimeoutSeconds\\)\\. Trying again now`),
  );

  // Silent after its first words: the turn ends with the error, the words kept.
  model.enqueue({ content: ["thinking about ", "it"], hang: true });
  await assert.rejects(agent.prompt(sessionId, "and?"), rejectsWith(new RegExp(silent)));
  assert.equal(model.requests.length, 3);
  assert.equal(model.aborted, 2, "both stalled streams were closed, not left open");
  assert.equal((await agent.prompt(sessionId, "still there?")).stopReason, "end_turn");
  const last = model.requests.at(-1)!.body.messages.at(-2);
  assert.match(last.content, /^thinking about it\n\n\[This answer is incomplete/);
});

test("a provider that cannot be reached is tried with backoff, then named as unreachable", async (t) => {
  const port = await refusedPort();
  const { agent, model, workdir } = await world(t, { env: { ...FAST, REASONIX_MODEL_RETRIES: "1", DEEPSEEK_BASE_URL: `http://127.0.0.1:${port}` } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await assert.rejects(agent.prompt(sessionId, "hello?"), (e: { code: number; message: string }) => {
    assert.equal(e.code, -32603);
    assert.match(e.message, /^Could not reach the model provider at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)\. Tried 2 times\.$/);
    return true;
  });
  assert.match(messageText(agent, sessionId), /\[notice\] Could not reach .* Trying again in 10 ms \(try 2 of 2\)/);
  assert.equal(model.requests.length, 0);
});

test("a cancel during the wait before another try ends the turn at once as cancelled", async (t) => {
  const { agent, model, workdir } = await world(t, { env: FAST });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ status: 503, headers: { "retry-after": "50" } });
  const turn = agent.prompt(sessionId, "wait for it");
  await agent.waitForUpdate((u) => u.update?.content?.text?.includes("Trying again in 50 s") ?? false);
  await agent.cancel(sessionId);
  assert.equal((await turn).stopReason, "cancelled");
  assert.equal(model.requests.length, 1, "no second try after the cancel");
  assert.equal((await agent.prompt(sessionId, "next")).stopReason, "end_turn");
});
