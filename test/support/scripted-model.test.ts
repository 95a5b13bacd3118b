import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import { ScriptedModel } from "./scripted-model.js";

let model: ScriptedModel;
let client: OpenAI;

before(async () => {
  model = await ScriptedModel.start();
  // maxRetries 0 so one scripted error is one request; the retry test opts back in.
  client = new OpenAI({ baseURL: model.url, apiKey: "sk-test-secret-key", maxRetries: 0 });
});
after(async () => {
  await model.close();
});

interface Collected {
  chunks: any[];
  reasoning: string;
  content: string;
  toolCalls: { id?: string; name: string; arguments: string }[];
  finishReason: string | null;
  usage: any;
}

/** Accumulates a stream the way an agent has to: tool calls by index, arguments concatenated. */
async function collect(stream: AsyncIterable<any>): Promise<Collected> {
  const out: Collected = { chunks: [], reasoning: "", content: "", toolCalls: [], finishReason: null, usage: null };
  for await (const chunk of stream) {
    out.chunks.push(chunk);
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (typeof delta.reasoning_content === "string") out.reasoning += delta.reasoning_content;
      if (typeof delta.content === "string") out.content += delta.content;
      for (const call of delta.tool_calls ?? []) {
        const slot = (out.toolCalls[call.index] ??= { name: "", arguments: "" });
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) out.finishReason = choice.finish_reason;
    }
  }
  return out;
}

function streamRequest(content: string, signal?: AbortSignal) {
  return client.chat.completions.create(
    {
      model: "deepseek-v4-flash",
      messages: [{ role: "user", content }],
      stream: true,
      stream_options: { include_usage: true },
    },
    signal ? { signal } : undefined,
  );
}

test("streams reasoning_content then content, with role first and usage last", async () => {
  model.enqueue({
    reasoning: ["Let me ", "think."],
    content: ["Hello", ", ", "world"],
    usage: { prompt_tokens: 100, completion_tokens: 20, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36, reasoning_tokens: 7 },
  });
  const before = model.requests.length;
  const got = await collect(await streamRequest("hi"));

  assert.equal(got.reasoning, "Let me think.");
  assert.equal(got.content, "Hello, world");
  assert.equal(got.finishReason, "stop");
  assert.equal(got.chunks[0].object, "chat.completion.chunk");
  assert.equal(got.chunks[0].choices[0].delta.role, "assistant");
  assert.ok(got.chunks.slice(1).every((c) => c.choices.length === 0 || c.choices[0].delta.role === undefined));
  const last = got.chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.deepEqual(last.usage, {
    prompt_tokens: 100,
    completion_tokens: 20,
    total_tokens: 120,
    prompt_cache_hit_tokens: 64,
    prompt_cache_miss_tokens: 36,
    completion_tokens_details: { reasoning_tokens: 7 },
    prompt_tokens_details: { cached_tokens: 64 },
  });
  assert.ok(
    got.chunks.slice(0, -1).every((c) => c.usage === null),
    "usage:null on all but the usage chunk",
  );

  const req = model.requests[before]!;
  assert.equal(req.method, "POST");
  assert.equal(req.path, "/chat/completions");
  assert.equal(req.body.stream, true);
  assert.deepEqual(req.body.messages, [{ role: "user", content: "hi" }]);
  assert.equal(req.headers.authorization, "Bearer sk-test-secret-key");
  assert.equal(JSON.parse(req.rawBody).model, "deepseek-v4-flash");
});

test("accumulates tool calls whose arguments arrive in several pieces", async () => {
  model.enqueue({
    content: ["Reading."],
    toolCalls: [
      { id: "call_a", name: "read_file", arguments: { path: "/tmp/some/long/path/to/file.txt", line: 1 } },
      { name: "grep", arguments: '{"pattern":"TODO ✓ 🙂","path":"/src"}' },
    ],
  });
  const got = await collect(await streamRequest("read it"));

  assert.equal(got.finishReason, "tool_calls");
  assert.equal(got.toolCalls.length, 2);
  assert.equal(got.toolCalls[0]!.id, "call_a");
  assert.equal(got.toolCalls[0]!.name, "read_file");
  assert.deepEqual(JSON.parse(got.toolCalls[0]!.arguments), { path: "/tmp/some/long/path/to/file.txt", line: 1 });
  assert.match(got.toolCalls[1]!.id ?? "", /^call_/);
  assert.deepEqual(JSON.parse(got.toolCalls[1]!.arguments), { pattern: "TODO ✓ 🙂", path: "/src" });

  const argPieces = got.chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.index === 0 && c.choices[0].delta.tool_calls[0].function?.arguments);
  assert.ok(argPieces.length >= 2, `arguments should be split, got ${argPieces.length} piece(s)`);
  // Only the opening piece of a call names it, as OpenAI does.
  const named = got.chunks.filter((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.name);
  assert.equal(named.length, 2);
});

test("finish reason length and no usage chunk without include_usage", async () => {
  model.enqueue({ content: ["trunc"], finishReason: "length" });
  const stream = await client.chat.completions.create({
    model: "deepseek-v4-pro",
    messages: [{ role: "user", content: "x" }],
    stream: true,
  });
  const got = await collect(stream);
  assert.equal(got.finishReason, "length");
  assert.equal(got.usage, null);
  assert.ok(got.chunks.every((c) => c.choices.length === 1 && !("usage" in c)));
  assert.ok(got.chunks.every((c) => c.model === "deepseek-v4-pro"));
});

test("default reply is ok, and respond() is used when the queue is empty", async () => {
  const first = await collect(await streamRequest("a"));
  assert.equal(first.content, "ok");

  model.respond = (req, index) => ({ content: [`echo ${req.body.messages[0].content} #${index}`] });
  try {
    const n = model.requests.length;
    const got = await collect(await streamRequest("b"));
    assert.equal(got.content, `echo b #${n}`);
  } finally {
    model.respond = undefined;
  }
});

test("non-streaming requests get a chat.completion, and GET /models lists models", async () => {
  model.enqueue({ reasoning: ["hmm"], content: ["done"], toolCalls: [{ id: "call_z", name: "glob", arguments: { pattern: "*.ts" } }] });
  const completion = await client.chat.completions.create({ model: "deepseek-v4-flash", messages: [{ role: "user", content: "x" }] });
  assert.equal(completion.object, "chat.completion");
  const message = completion.choices[0]!.message as any;
  assert.equal(message.content, "done");
  assert.equal(message.reasoning_content, "hmm");
  assert.equal(message.tool_calls[0].function.name, "glob");
  assert.equal(completion.choices[0]!.finish_reason, "tool_calls");
  assert.ok(completion.usage!.total_tokens > 0);

  const models = [];
  for await (const m of client.models.list()) models.push(m.id);
  assert.ok(models.includes("deepseek-v4-flash"));
});

test("HTTP errors surface as APIError with the status and body", async () => {
  model.enqueue({ status: 401, errorBody: { error: { message: "Authentication Fails", type: "authentication_error", code: "invalid_api_key" } } });
  await assert.rejects(streamRequest("x"), (err: any) => {
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 401);
    assert.equal(err.code, "invalid_api_key");
    assert.match(err.message, /Authentication Fails/);
    return true;
  });

  model.enqueue({ status: 500 });
  await assert.rejects(streamRequest("x"), (err: any) => err.status === 500 && err.type === "server_error");
});

test("the openai SDK's retry consumes the next scripted reply", async () => {
  const retrying = new OpenAI({ baseURL: model.url, apiKey: "k", maxRetries: 1 });
  model.enqueue({ status: 500, headers: { "retry-after-ms": "0" } }, { content: ["recovered"] });
  const n = model.requests.length;
  const got = await collect(await retrying.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true }));
  assert.equal(got.content, "recovered");
  assert.equal(model.requests.length, n + 2);
  assert.equal(model.pending, 0);
});

test("an in-stream error event makes the SDK throw", async () => {
  model.enqueue({ content: ["part"], streamError: { message: "Server overloaded", type: "server_error", code: null } });
  const stream = await streamRequest("x");
  await assert.rejects(collect(stream), /Server overloaded/);
});

test("a dropped connection mid-stream is an error for the client, not an abort", async () => {
  const abortedBefore = model.aborted;
  model.enqueue({ content: ["a", "b"], dropConnection: true });
  const stream = await streamRequest("x");
  await assert.rejects(collect(stream));
  assert.equal(model.aborted, abortedBefore);
});

test("counts streams the client aborts: hang, and chunkDelayMs mid-stream", async () => {
  const abortedBefore = model.aborted;

  model.enqueue({ content: ["waiting"], hang: true });
  const controller = new AbortController();
  const stream = await streamRequest("hang", controller.signal);
  const seen: string[] = [];
  const reading = (async () => {
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta.content;
      if (text) {
        seen.push(text);
        controller.abort();
      }
    }
  })();
  await reading.catch(() => undefined);
  assert.deepEqual(seen, ["waiting"]);
  await waitFor(() => model.aborted === abortedBefore + 1);

  model.enqueue({ content: ["1", "2", "3", "4", "5"], chunkDelayMs: 200 });
  const slow = new AbortController();
  const slowStream = await streamRequest("slow", slow.signal);
  const slowSeen: string[] = [];
  await (async () => {
    for await (const chunk of slowStream) {
      const text = chunk.choices[0]?.delta.content;
      if (text) {
        slowSeen.push(text);
        slow.abort();
      }
    }
  })().catch(() => undefined);
  assert.deepEqual(slowSeen, ["1"]);
  await waitFor(() => model.aborted === abortedBefore + 2);
});

test("waitForRequests resolves on arrival and rejects on timeout", async () => {
  const n = model.requests.length;
  const waiting = model.waitForRequests(n + 1, 5000);
  await collect(await streamRequest("x"));
  await waiting;
  await assert.rejects(model.waitForRequests(n + 5, 50), /expected 5|expected \d+ chat requests/);
});

test("default usage counts the repeated prefix of the conversation as cache hits", async () => {
  const messages: any[] = [
    { role: "system", content: "You are a careful agent. ".repeat(20) },
    { role: "user", content: "first question" },
  ];
  const first = await collect(await client.chat.completions.create({ model: "m", messages, stream: true, stream_options: { include_usage: true } }));
  messages.push({ role: "assistant", content: first.content }, { role: "user", content: "second" });
  const second = await collect(await client.chat.completions.create({ model: "m", messages, stream: true, stream_options: { include_usage: true } }));
  assert.ok(second.usage.prompt_cache_hit_tokens > 100, JSON.stringify(second.usage));
  assert.equal(second.usage.prompt_cache_hit_tokens + second.usage.prompt_cache_miss_tokens, second.usage.prompt_tokens);
});

test("close() ends hanging streams and stops listening", async () => {
  const local = await ScriptedModel.start();
  const localClient = new OpenAI({ baseURL: local.url, apiKey: "k", maxRetries: 0 });
  local.enqueue({ content: ["x"], hang: true });
  const stream = await localClient.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true });
  const reading = collect(stream).then(
    () => "ended",
    () => "failed",
  );
  await local.close();
  assert.ok(["ended", "failed"].includes(await reading));
  assert.equal(local.aborted, 0);
  await assert.rejects(fetch(`${local.url}/models`));
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("cutShort ends the stream cleanly with no finish_reason and no [DONE]; body answers 200 with anything; silent sends no headers", async () => {
  model.enqueue({ content: ["half"], cutShort: true });
  const got = await collect(await streamRequest("x"));
  assert.equal(got.content, "half");
  assert.equal(got.finishReason, null, "the SDK sees the stream simply end");

  model.enqueue({ body: { contentType: "text/html", text: "<html><title>Login</title></html>" } });
  const res = await fetch(`${model.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [], stream: true }) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html");
  assert.match(await res.text(), /<title>Login<\/title>/);

  model.enqueue({ silent: true });
  const controller = new AbortController();
  const n = model.requests.length;
  const waiting = fetch(`${model.url}/v1/chat/completions`, { method: "POST", body: "{}", signal: controller.signal });
  await model.waitForRequests(n + 1);
  controller.abort();
  await assert.rejects(waiting, /abort/i);
});

test("generate streams N pieces of a given size into reasoning, content or a tool call's arguments", async () => {
  model.enqueue({ reasoning: ["first "], generate: { part: "reasoning", chunks: 200, size: 1000 } });
  const thought = await collect(await streamRequest("think a lot"));
  assert.equal(thought.reasoning, `first ${"x".repeat(200_000)}`);
  assert.equal(thought.finishReason, "stop");

  model.enqueue({ generate: { part: "content", chunks: 3, size: 5 } });
  assert.equal((await collect(await streamRequest("say a lot"))).content, "xxxxxxxxxxxxxxx");

  model.enqueue({ generate: { part: "arguments", chunks: 4, size: 2, name: "write_file" } });
  const call = await collect(await streamRequest("write a lot"));
  assert.equal(call.toolCalls.length, 1);
  assert.equal(call.toolCalls[0]!.name, "write_file");
  assert.equal(call.toolCalls[0]!.arguments, `{"content":"${"x".repeat(8)}`);
});

test("a generated stream stops writing once the client goes away", async () => {
  const abortedBefore = model.aborted;
  let sent = 0;
  // 64 GiB if it never stopped: it must stop at the client's abort, held back by the socket meanwhile.
  model.enqueue({ generate: { part: "reasoning", chunks: 1_000_000, size: 64 * 1024 }, onSent: (n) => (sent = n + 1) });
  const controller = new AbortController();
  const stream = await streamRequest("runaway", controller.signal);
  let received = 0;
  await (async () => {
    for await (const chunk of stream) {
      received += (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content?.length ?? 0;
      if (received >= 4 * 1024 * 1024) controller.abort();
    }
  })().catch(() => undefined);
  await waitFor(() => model.aborted === abortedBefore + 1);
  const atAbort = sent;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(sent, atAbort, "nothing written after the client left");
  assert.ok(sent < 1000, `only what the socket took was written (${sent} pieces)`);
});
