import { test } from "node:test";
import assert from "node:assert/strict";
import { describeProviderError, NO_ANSWER, normaliseUsage, RoundAccumulator, wellFormed } from "./openai-chat.js";
import { MAX_TOOL_CALLS, ROUND_LIMITS } from "./round-limits.js";

test("accumulates reasoning, content and streamed tool-call pieces", () => {
  const acc = new RoundAccumulator();
  const deltas = [
    ...acc.add({ choices: [{ delta: { role: "assistant", reasoning_content: "think" } }] }),
    ...acc.add({ choices: [{ delta: { content: "Hi" } }] }),
    ...acc.add({ choices: [{ delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "read_", arguments: '{"pa' } }] } }] }),
    ...acc.add({ choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "file", arguments: 'th":"a"}' } }] }, finish_reason: "tool_calls" }] }),
    ...acc.add({
      choices: [],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_cache_hit_tokens: 8,
        prompt_cache_miss_tokens: 2,
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    }),
  ];
  assert.deepEqual(deltas, [
    { kind: "thought", text: "think" },
    { kind: "text", text: "Hi" },
  ]);
  const r = acc.result();
  assert.deepEqual(r.toolCalls, [{ id: "c1", name: "read_file", arguments: '{"path":"a"}' }]);
  assert.equal(r.finishReason, "tool_calls");
  assert.deepEqual(r.usage, { promptTokens: 10, completionTokens: 5, cacheHitTokens: 8, cacheMissTokens: 2, reasoningTokens: 3 });
});

test("usage falls back to OpenAI cached_tokens", () => {
  assert.deepEqual(normaliseUsage({ prompt_tokens: 100, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 60 } }), {
    promptTokens: 100,
    completionTokens: 1,
    cacheHitTokens: 60,
    cacheMissTokens: 40,
    reasoningTokens: 0,
  });
});

test("provider errors are one sentence and never carry the key", () => {
  const key = "sk-abcdef1234567890";
  const err = describeProviderError(
    { status: 401, message: `401 Incorrect API key provided: ${key}. Authorization: Bearer ${key}` },
    { baseUrl: "http://127.0.0.1:9/v1", apiKey: key },
  );
  assert.equal(err.code, -32603);
  assert.ok(!err.message.includes(key));
  assert.ok(!err.message.includes("\n"));
  assert.match(err.message, /HTTP 401/);
});

test("two user messages in a row get a note between them, inserted so each request still begins with the one before", () => {
  const first = [
    { role: "system" as const, content: "s" },
    { role: "user" as const, content: "P5 do it" },
  ];
  const second = [...first, { role: "user" as const, content: "P6 do it" }];
  const a = wellFormed(first);
  const b = wellFormed(second);
  assert.deepEqual(a, first);
  assert.deepEqual(
    b.map((m) => m.role),
    ["system", "user", "assistant", "user"],
  );
  assert.equal(b[2]!.content, NO_ANSWER);
  assert.deepEqual(b.slice(0, a.length), a, "the previous request is the prefix");
  assert.deepEqual(
    wellFormed([
      { role: "user", content: "x" },
      { role: "assistant", content: "y" },
      { role: "user", content: "z" },
    ]).length,
    3,
  );
});

test("each part of a round is bounded: past it nothing more is taken and the round says where it was cut", () => {
  const piece = "x".repeat(1024 * 1024);
  const thinking = new RoundAccumulator();
  for (let i = 0; i < 4; i++) assert.equal(thinking.add({ choices: [{ delta: { reasoning_content: piece } }] }).length, 1);
  assert.equal(thinking.cut, undefined, "exactly at the bound is within it");
  assert.deepEqual(thinking.add({ choices: [{ delta: { reasoning_content: "y", content: "z" } }] }), []);
  assert.deepEqual(thinking.add({ choices: [{ delta: { content: "after" } }] }), [], "nothing after the cut");
  const r = thinking.result();
  assert.deepEqual(r.cut, { part: "reasoning", limit: ROUND_LIMITS.reasoning });
  assert.equal(r.reasoning.length, 4 * piece.length);
  assert.equal(r.content, "");

  // Bytes, not characters: three bytes each in UTF-8, so the second million passes 4 MiB.
  const text = new RoundAccumulator();
  const wide = "字".repeat(1024 * 1024);
  assert.deepEqual(
    text.add({ choices: [{ delta: { reasoning_content: "ok", content: wide } }] }).map((d) => d.kind),
    ["thought", "text"],
  );
  assert.equal(text.add({ choices: [{ delta: { content: wide } }] }).length, 0);
  assert.deepEqual(text.result().cut, { part: "text", limit: ROUND_LIMITS.text });
  assert.equal(text.result().content.length, wide.length);

  const args = new RoundAccumulator();
  args.add({ choices: [{ delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "write_file", arguments: piece.repeat(3) } }] } }] });
  args.add({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }] });
  assert.deepEqual(args.result().cut, { part: "arguments", limit: ROUND_LIMITS.arguments });
  assert.equal(args.result().toolCalls[0]!.arguments.length, 3 * piece.length);

  const calls = new RoundAccumulator();
  calls.add({ choices: [{ delta: { tool_calls: [{ index: 4_294_967_294, function: { name: "x", arguments: "{}" } }] } }] });
  assert.deepEqual(calls.result(), {
    content: "",
    reasoning: "",
    toolCalls: [],
    finishReason: null,
    usage: undefined,
    cut: { part: "calls", limit: MAX_TOOL_CALLS },
  });
});
