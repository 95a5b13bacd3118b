import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChatMessage, ToolSpec } from "../provider/types.js";
import {
  compactedHistory,
  compactionTrigger,
  contextEstimate,
  currentSummary,
  estimateMessages,
  planCut,
  summaryRequest,
  trimmedHistory,
  trimToolOutputs,
} from "./compaction.js";

const sys: ChatMessage = { role: "system", content: "system prompt" };
const user = (t: string): ChatMessage => ({ role: "user", content: t });
const answer = (t: string): ChatMessage => ({ role: "assistant", content: t });
const callMsg = (id: string): ChatMessage => ({
  role: "assistant",
  content: null,
  reasoning_content: "r",
  tool_calls: [{ id, type: "function", function: { name: "read_file", arguments: "{}" } }],
});
const result = (id: string, text: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: text });
const settings = { auto: true, ratio: 0.8, keepRatio: 0.25 };

test("the trigger: the ratio when auto, the window always (less room for the answer)", () => {
  assert.equal(compactionTrigger(700, 1000, settings), "none");
  assert.equal(compactionTrigger(800, 1000, settings), "ratio");
  assert.equal(compactionTrigger(960, 1000, settings), "window");
  assert.equal(compactionTrigger(900, 1000, { ...settings, auto: false }), "none");
  assert.equal(compactionTrigger(990, 1000, { ...settings, auto: false }), "window");
});

test("the estimate starts from the provider's count and adds what came since", () => {
  const history = [sys, user("hello"), answer("hi"), user("more")];
  assert.equal(contextEstimate(history, [], { promptTokens: 500, messages: 2 }), 500 + estimateMessages(history.slice(2)));
  assert.equal(contextEstimate(history, [], undefined), estimateMessages(history) + 1, "no count: everything estimated (`[]` is one token)");
  assert.equal(contextEstimate(history, [], { promptTokens: 500, messages: 9 }), estimateMessages(history) + 1, "a count for a longer history is stale");
});

test("the tool list's estimate is its whole JSON's, counted from each spec's size", () => {
  const spec = (name: string, description: string): ToolSpec => ({ type: "function", function: { name, description, parameters: { type: "object" } } });
  const tools = [spec("read_file", "Reads a file ünïcödé 文件"), spec("grep", "x".repeat(1000)), spec("glob", "")];
  for (const list of [[], tools.slice(0, 1), tools]) {
    const whole = Math.ceil(Buffer.byteLength(JSON.stringify(list)) / 3);
    assert.equal(contextEstimate([sys], list, undefined), whole + estimateMessages([sys]));
    assert.equal(contextEstimate([sys], list, undefined), whole + estimateMessages([sys]), "the same again, from the kept sizes");
  }
});

test("the cut keeps whole recent turns that fit, never splits a tool call from its result", () => {
  const big = "x".repeat(3000);
  const history = [sys, user(big), answer(big), user("q2"), callMsg("c1"), result("c1", "short"), answer("a2"), user("q3")];
  const cut = planCut(history, 200)!;
  assert.equal(cut, 3, "from the second turn's start: it fits");
  // Nothing fits but the pending prompt: it alone is kept.
  assert.equal(planCut([sys, user(big), answer(big), user(big)], 10), 3);
  // Inside one long turn the cut falls on an assistant message, before its tool result.
  const oneTurn = [sys, user("go"), callMsg("a"), result("a", big), callMsg("b"), result("b", "ok")];
  assert.equal(planCut(oneTurn, 100), 4);
  assert.equal(planCut([sys, user("only")], 100), undefined, "nothing to summarise");
});

test("the new history: system prompt, the summary in the role that alternates, the kept turns; tool outputs trimmed to fit", () => {
  const history = [sys, user("q1"), answer("a1"), user("q2")];
  const next = compactedHistory(history, 3, "S", { mode: "normal" }, 1000);
  assert.deepEqual(next[0], sys);
  assert.equal(next[1]!.role, "assistant");
  assert.match(next[1]!.content!, /Summary of the earlier conversation \(2 messages compacted\):\n\nS$/);
  assert.deepEqual(next.slice(2), [user("q2")]);
  assert.equal(currentSummary(next), next[1]!.content);
  const mid = compactedHistory([sys, user("go"), callMsg("a"), result("a", "y".repeat(20_000))], 2, "S", { mode: "plan" }, 1000);
  assert.equal(mid[1]!.role, "user", "a kept assistant step follows a user-role summary");
  assert.match(mid.at(-1)!.content!, /more characters trimmed to save context/);
  assert.ok(estimateMessages(mid.slice(2)) < 2000);
});

test("the summary request repeats the conversation as it was sent, then asks; trimmed when it would not fit", () => {
  const history = [sys, user("q1"), callMsg("c"), result("c", "z".repeat(30_000)), answer("a1"), user("q2")];
  const req = summaryRequest(history, 5, { mode: "goal", goal: { text: "ship", status: "active", turns: 1 }, focus: "tests" }, 100_000);
  assert.deepEqual(req.slice(0, 5), history.slice(0, 5));
  assert.match(req.at(-1)!.content!, /file path[\s\S]*Goal \(active, 1 turns so far\): ship[\s\S]*Focus the summary on: tests/);
  const small = summaryRequest(history, 5, { mode: "normal" }, 1000);
  assert.ok(estimateMessages(small) <= 1000 + 400, "fits its budget");
  assert.match(JSON.stringify(small), /trimmed to save context/);
});

test("the fallback without a summary: older tool outputs trimmed hard, oldest turns dropped while over the limit", () => {
  const history = [sys, user("q1"), callMsg("c"), result("c", "w".repeat(9000)), answer("a1"), user("q2"), answer("a2"), user("q3")];
  const trimmed = trimmedHistory(history, 7, 100_000, 1000, []);
  assert.equal(trimmed.length, history.length);
  assert.match(trimmed[3]!.content!, /trimmed/);
  const dropped = trimmedHistory(history, 7, 30, 1000, []);
  assert.deepEqual(dropped, [sys, user("q2"), answer("a2"), user("q3")], "the oldest turn left out; the last one before the cut stays");
  const oneTurn = trimmedHistory([sys, user("go"), callMsg("c"), result("c", "v".repeat(20_000))], 2, 100, 500, []);
  assert.deepEqual(oneTurn[1], user("go"), "the turn's own prompt is never left out");
  assert.match(oneTurn.at(-1)!.content!, /trimmed to save context/, "the kept part's large output is trimmed");
  assert.deepEqual(trimToolOutputs([result("c", "abc")], 10), [result("c", "abc")]);
});
