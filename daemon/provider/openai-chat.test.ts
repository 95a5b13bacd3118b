import { test } from "node:test";
import assert from "node:assert/strict";
import { describeProviderError, NO_ANSWER, normaliseUsage, RoundAccumulator, wellFormed } from "./openai-chat.js";

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
