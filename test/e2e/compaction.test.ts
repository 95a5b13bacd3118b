/**
 * Long sessions: context compaction against a provider with a small `contextWindow`, where the
 * scripted model's usage grows with the request (a quarter of its serialized tools and messages)
 * and a request over the window is refused as DeepSeek refuses it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stopDaemon } from "../support/harness.js";
import type { RecordedRequest, ScriptedModel } from "../support/scripted-model.js";
import { world, within } from "./fixture.js";

const WINDOW = 7000;
const STEER = "_reasonix.io/session/steer";

/** config.json: the built-in provider, its window made small. */
const smallWindow = (window: number) => (dir: string) =>
  writeFileSync(
    join(dir, "config.json"),
    JSON.stringify({
      providers: [
        { name: "deepseek", baseUrl: "https://api.deepseek.com", apiKeyEnv: "DEEPSEEK_API_KEY", models: ["deepseek-v4-flash"], contextWindow: window },
      ],
    }),
  );

const isSummaryRequest = (r: RecordedRequest): boolean => /about to be compacted/.test(r.body?.messages?.at(-1)?.content ?? "");
const carriesSummary = (r: RecordedRequest): boolean => /^\[Reasonix\] Summary of the earlier conversation/.test(r.body?.messages?.[1]?.content ?? "");
const filler = (i: number, chars: number): string =>
  `Prompt ${i} asks about module ${i}. ${"The parser reads tokens and builds a tree. ".repeat(Math.ceil(chars / 42))}`.slice(0, chars);
const answerOf = (i: number): string => `Answer ${i}: ${"module notes, decisions and paths. ".repeat(20)}done ${i}.`;

/** Answers prompt i with answerOf(i); a summary request with a summary naming every prompt it saw. */
function scriptSession(model: ScriptedModel): void {
  model.contextWindow = WINDOW;
  model.respond = (req) => {
    if (isSummaryRequest(req)) {
      const seen = (req.body.messages as Array<{ content: string | null }>).map((m) => /^Prompt (\d+)/.exec(m.content ?? "")?.[1]).filter(Boolean);
      return { content: [`SUMMARY: the user asked prompts ${seen.join(", ")}; decisions kept.`] };
    }
    const last = req.body.messages.at(-1).content as string;
    const i = /^Prompt (\d+)/.exec(last)?.[1] ?? "?";
    return { content: [answerOf(Number(i))] };
  };
}

test("eight long prompts in a window that holds about three: all end_turn, a summary is made and carried, no request exceeds the window, the editor sees the notice and a smaller usage_update; after a restart load replays everything and the next request continues from the compacted history", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { prepare: smallWindow(WINDOW) });
  scriptSession(model);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  for (let i = 1; i <= 8; i++) assert.equal((await agent.prompt(sessionId, filler(i, 2400))).stopReason, "end_turn", `prompt ${i}`);

  const reqs = model.requests;
  for (const r of reqs) assert.ok(model.promptTokens(r) <= WINDOW, `a request of ${model.promptTokens(r)} tokens exceeds the window of ${WINDOW}`);
  const summaries = reqs.map((r, i) => (isSummaryRequest(r) ? i : -1)).filter((i) => i >= 0);
  assert.ok(summaries.length >= 1, "a summarisation request happened");
  const first = summaries[0]!;
  const after = reqs[first + 1]!;
  assert.ok(carriesSummary(after), "the next request starts from the summary");
  assert.match(after.body.messages[1].content, /SUMMARY: the user asked prompts 1/);
  // Before the compaction the conversation was the last request's messages, its answer and the new prompt.
  const had = reqs[first - 1]!.body.messages.length + 2;
  assert.ok(after.body.messages.length < had, `fewer messages than before the compaction: ${after.body.messages.length}, not fewer than ${had}`);
  // The summary request reads the conversation exactly as it was last sent (the prefix cache holds).
  const before = reqs[first - 1]!.body.messages;
  assert.equal(JSON.stringify(reqs[first]!.body.messages.slice(0, before.length - 1)), JSON.stringify(before.slice(0, -1)));
  assert.equal(reqs[first]!.body.tool_choice, "none");

  const updates = agent.updatesFor(sessionId);
  const noticeAt = updates.findIndex(
    (u) => u.sessionUpdate === "agent_message_chunk" && /^\[compacted \d+ earlier messages to save context\]/.test(u.content.text),
  );
  assert.ok(noticeAt > 0, "the [compacted …] notice reached the editor");
  assert.ok(updates.slice(0, noticeAt).some((u) => u.sessionUpdate === "agent_message_chunk" && /\[compacting \d+ earlier messages/.test(u.content.text)));
  const usageBefore = updates
    .slice(0, noticeAt)
    .filter((u) => u.sessionUpdate === "usage_update")
    .at(-1);
  const usageAfter = updates.slice(noticeAt).find((u) => u.sessionUpdate === "usage_update");
  assert.ok(usageBefore && usageAfter, "usage_update before and after");
  assert.ok(usageAfter.used < usageBefore.used, `the context shrank: ${usageBefore.used} → ${usageAfter.used}`);
  assert.equal(usageAfter.size, WINDOW);

  const status = agent.textOf(sessionId, "agent_message_chunk", updates.length);
  assert.equal(status, "");
  await agent.prompt(sessionId, "/status");
  assert.match(
    agent.textOf(sessionId, "agent_message_chunk", updates.length),
    new RegExp(`Context: about [\\d,]+ tokens of ${WINDOW.toLocaleString("en-US")} \\(\\d+%\\); compacted \\d+ times?`),
  );
  const lastSummary = reqs.filter(isSummaryRequest).length;

  await agent.closeStdin();
  await stopDaemon(home.dir);
  const next = spawn();
  await next.initialize();
  await next.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  const replayed = next.updatesFor(sessionId);
  const prompts = replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
  assert.deepEqual(
    prompts.slice(0, 8),
    [1, 2, 3, 4, 5, 6, 7, 8].map((i) => filler(i, 2400)),
  );
  const text = next.textOf(sessionId);
  for (let i = 1; i <= 8; i++) assert.ok(text.includes(answerOf(i)), `answer ${i} replayed in full`);

  const count = model.requests.length;
  assert.equal((await next.prompt(sessionId, filler(9, 200))).stopReason, "end_turn");
  const resumed = model.requests.slice(count).find((r) => !isSummaryRequest(r))!;
  assert.ok(carriesSummary(resumed), "the next request continues from the compacted history");
  assert.ok(!JSON.stringify(resumed.body.messages).includes(filler(1, 2400)), "not from the full one");
  assert.ok(lastSummary >= 1);
});

test("/compact compacts on demand without a model turn; /compact focus on the parser passes the focus; /summary shows it", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  for (const q of ["first question", "second question", "third question"]) {
    model.enqueue({ content: [`answer to the ${q}`] });
    await agent.prompt(sessionId, q);
  }
  // Plan mode outlives the compaction: the summary re-states its note (the note itself was summarised).
  await agent.rpc.request("session/set_mode", { sessionId, modeId: "plan" });
  model.enqueue({ content: ["SUMMARY ONE"] });
  assert.equal((await agent.prompt(sessionId, "/compact")).stopReason, "end_turn");
  assert.equal(model.requests.length, 4, "one request: the summary");
  assert.ok(isSummaryRequest(model.requests[3]!));
  assert.doesNotMatch(model.requests[3]!.body.messages.at(-1).content, /Focus the summary/);
  assert.match(agent.textOf(sessionId), /\[compacted \d+ earlier messages to save context\][\s\S]*Context: about/);

  model.enqueue({ content: ["answer four"] }, { content: ["SUMMARY TWO"] });
  await agent.prompt(sessionId, "fourth question");
  assert.match(model.requests[4]!.body.messages[1].content, /SUMMARY ONE[\s\S]*Still in force: \[Reasonix\] Plan mode is on/);
  assert.equal((await agent.prompt(sessionId, "/compact focus on the parser")).stopReason, "end_turn");
  assert.equal(model.requests.length, 6);
  assert.match(model.requests[5]!.body.messages.at(-1).content, /Focus the summary on: the parser$/);

  const from = agent.updatesFor(sessionId).length;
  await agent.prompt(sessionId, "/summary");
  assert.match(agent.textOf(sessionId, "agent_message_chunk", from), /Summary in force[\s\S]*SUMMARY TWO/);
  assert.equal(model.requests.length, 6, "/summary asks no model");
  const at = agent.updatesFor(sessionId).length;
  await agent.prompt(sessionId, "/status");
  // Four questions and two summaries: each summary counted like any round.
  assert.match(agent.textOf(sessionId, "agent_message_chunk", at), /Usage so far: 6 model rounds/);
  assert.match(agent.textOf(sessionId, "agent_message_chunk", at), /compacted 2 times/);
});

test("a failing summary request: the prompt still completes, with older tool outputs trimmed and a visible notice", async (t) => {
  const { agent, model, workdir } = await world(t, { prepare: smallWindow(WINDOW) });
  writeFileSync(join(workdir, "big.txt"), "a line of the big file that the model reads\n".repeat(70));
  model.contextWindow = WINDOW;
  model.respond = (req) => {
    if (isSummaryRequest(req)) return { status: 400, errorBody: { error: { message: "summary refused", type: "invalid_request_error" } } };
    const last = req.body.messages.at(-1);
    if (last.role === "tool") return { content: ["Read it."] };
    return { toolCalls: [{ name: "read_file", arguments: { path: "big.txt" } }] };
  };
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  for (let i = 1; i <= 4; i++) assert.equal((await agent.prompt(sessionId, `read big.txt again (${i})`)).stopReason, "end_turn");
  const failed = model.requests.findIndex(isSummaryRequest);
  assert.ok(failed > 0, "a summary was asked for");
  const next = model.requests[failed + 1]!;
  assert.ok(!isSummaryRequest(next));
  assert.match(JSON.stringify(next.body.messages), /more characters trimmed to save context/);
  const firstOutput = (r: RecordedRequest): string => r.body.messages.find((m: { role: string }) => m.role === "tool").content;
  assert.ok(firstOutput(next).length < firstOutput(model.requests[failed - 1]!).length / 4, "the older read is trimmed");
  const prompts = next.body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content);
  const latest = Math.max(...prompts.map((p: string) => Number(/\((\d+)\)$/.exec(p)?.[1] ?? 0)));
  assert.ok(latest >= 2);
  assert.deepEqual(
    prompts,
    Array.from({ length: latest }, (_, i) => `read big.txt again (${i + 1})`),
    "every prompt is still there",
  );
  assert.match(agent.textOf(sessionId), /\[warning\] Compaction failed \(.*summary refused.*\); older tool outputs were trimmed instead/);
  for (const r of model.requests) assert.ok(model.promptTokens(r) <= WINDOW);
});

test("a steer sent during the summary request reaches the next round; goal mode keeps its objective across a compaction", async (t) => {
  const { agent, model, workdir } = await world(t, { prepare: smallWindow(WINDOW) });
  model.contextWindow = WINDOW;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let summaries = 0;
  const summaryCount = (): number => summaries;
  model.respond = (req) => {
    if (isSummaryRequest(req)) {
      summaries++;
      return summaries === 1 ? { content: ["SUMMARY ", "of the work"], holdUntil: held } : { content: ["SUMMARY again"] };
    }
    return { content: [answerOf(model.requests.length)] };
  };
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const { sessionId: goalSession } = await agent.newSession(workdir);
  let i = 0;
  let steered: Promise<unknown> | undefined;
  while (summaries === 0 && i < 8) {
    const turn = agent.prompt(sessionId, filler(++i, 2400));
    // The summary request is the first thing a turn that compacts sends: steer while it is held.
    await within(10_000, "a request of this turn", model.waitForRequests(model.requests.length + 1));
    if (summaryCount() === 1 && !steered) {
      const r = await agent.rpc.request(STEER, { sessionId, prompt: [{ type: "text", text: "steer: keep the old API" }] });
      assert.equal(r.disposition, "steer_accepted");
      steered = Promise.resolve();
      release();
    }
    assert.equal((await turn).stopReason, "end_turn");
  }
  const at = model.requests.findIndex(isSummaryRequest);
  assert.ok(at > 0 && steered, "a compaction happened and the steer was sent during it");
  const nextRound = model.requests[at + 1]!.body.messages;
  assert.ok(carriesSummary(model.requests[at + 1]!));
  assert.deepEqual(nextRound.at(-1), { role: "user", content: "steer: keep the old API" });

  // Goal mode: long answers until a compaction, then the model reports the goal complete.
  await agent.rpc.request("session/set_mode", { sessionId: goalSession, modeId: "goal" });
  const start = model.requests.length;
  model.respond = (req) => {
    if (isSummaryRequest(req)) return { content: ["GOAL SUMMARY"] };
    if (req.body.messages.at(-1).role === "tool") return { content: [answerOf(model.requests.length)] };
    const done = model.requests.slice(start).some(isSummaryRequest);
    return { toolCalls: [{ name: "update_goal", arguments: { status: done ? "complete" : "continue", summary: done ? "all modules" : "one more module" } }] };
  };
  assert.equal((await agent.prompt(goalSession, "Port every module of the parser")).stopReason, "end_turn");
  const goalReqs = model.requests.slice(start);
  const summaryAt = goalReqs.findIndex(isSummaryRequest);
  assert.ok(summaryAt > 0, "goal turns crossed the window");
  assert.match(goalReqs[summaryAt]!.body.messages.at(-1).content, /Goal \(active, \d+ turns so far\): [\s\S]*Port every module of the parser/);
  const resumed = goalReqs[summaryAt + 1]!.body.messages;
  assert.match(resumed[1].content, /GOAL SUMMARY[\s\S]*Goal \(active, \d+ turns so far\): [\s\S]*Port every module of the parser/);
  assert.match(agent.textOf(goalSession), /\[goal\] Complete: all modules/);
});
