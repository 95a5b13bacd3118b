/**
 * A ChatModel on the official openai SDK. The SDK is imported lazily so that the daemon binds its
 * socket and answers `initialize` before paying for it.
 */
import type OpenAI from "openai";
import { RpcError } from "../../shared/jsonrpc.js";
import type { ChatMessage, ChatModel, Delta, RoundRequest, RoundResult, Usage } from "./types.js";
import type { Endpoint } from "./registry.js";
import { oneSentence, redact } from "./redact.js";
import type { Readable } from "node:stream";
import { nodeFetch, rawBody } from "./node-fetch.js";
import { SseParser, type SseEvent } from "./sse.js";

let sdk: Promise<typeof import("openai")> | undefined;
const loadSdk = (): Promise<typeof import("openai")> => (sdk ??= import("openai"));

/** Accumulates streamed deltas into one round; kept pure so it can be table-tested. */

/** What stands between two user messages that no answer separated (a turn cut short). */
export const NO_ANSWER = "(No answer: that turn was interrupted before the model replied.)";

/**
 * The conversation as providers accept it: two user messages in a row (a turn that ended before
 * the model answered, then the next prompt) get a short assistant note between them. Inserted, not
 * merged, so every request still begins with the one before it (the prefix cache holds).
 */
export function wellFormed(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === "user" && out.at(-1)?.role === "user") out.push({ role: "assistant", content: NO_ANSWER });
    out.push(m);
  }
  return out;
}

export class RoundAccumulator {
  content = "";
  reasoning = "";
  finishReason: string | null = null;
  usage: Usage | undefined;
  private readonly calls: Array<{ id: string; name: string; arguments: string }> = [];

  /** Returns the user-visible deltas in this chunk, in order. */
  add(chunk: unknown): Delta[] {
    const out: Delta[] = [];
    const c = chunk as {
      choices?: Array<{
        delta?: {
          content?: string | null;
          reasoning_content?: string | null;
          reasoning?: string | null;
          tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
        };
        finish_reason?: string | null;
      }>;
      usage?: Record<string, unknown> | null;
    };
    for (const choice of c.choices ?? []) {
      const d = choice.delta ?? {};
      const thought = d.reasoning_content ?? d.reasoning;
      if (thought) {
        this.reasoning += thought;
        out.push({ kind: "thought", text: thought });
      }
      if (d.content) {
        this.content += d.content;
        out.push({ kind: "text", text: d.content });
      }
      for (const tc of d.tool_calls ?? []) {
        const i = tc.index ?? this.calls.length;
        const call = (this.calls[i] ??= { id: "", name: "", arguments: "" });
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.name += tc.function.name;
        if (tc.function?.arguments) call.arguments += tc.function.arguments;
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    if (c.usage) this.usage = normaliseUsage(c.usage);
    return out;
  }

  result(): RoundResult {
    return {
      content: this.content,
      reasoning: this.reasoning,
      toolCalls: this.calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` })),
      finishReason: this.finishReason,
      usage: this.usage,
    };
  }
}

export function normaliseUsage(u: Record<string, unknown>): Usage {
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const prompt = n(u.prompt_tokens);
  const details = (u.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const hit = u.prompt_cache_hit_tokens !== undefined ? n(u.prompt_cache_hit_tokens) : n(details.cached_tokens);
  const miss = u.prompt_cache_miss_tokens !== undefined ? n(u.prompt_cache_miss_tokens) : Math.max(0, prompt - hit);
  const completionDetails = (u.completion_tokens_details ?? {}) as Record<string, unknown>;
  return {
    promptTokens: prompt,
    completionTokens: n(u.completion_tokens),
    cacheHitTokens: hit,
    cacheMissTokens: miss,
    reasoningTokens: n(completionDetails.reasoning_tokens),
  };
}

export function describeProviderError(err: unknown, endpoint: Endpoint): RpcError {
  const e = err as { status?: number; message?: string; name?: string; cause?: { code?: string } };
  let host = endpoint.baseUrl;
  try {
    host = new URL(endpoint.baseUrl).host;
  } catch {
    // keep the raw value; it is configuration, not a secret
  }
  let sentence: string;
  if (typeof e.status === "number") {
    const hint = e.status === 401 || e.status === 403 ? " (check the API key; `reasonix setup` can store one)" : "";
    sentence = `The model provider at ${host} answered HTTP ${e.status}${hint}: ${oneSentence(e.message ?? "")}`;
  } else if (e.name === "APIConnectionError" || e.cause?.code) {
    sentence = `Could not reach the model provider at ${host}${e.cause?.code ? ` (${e.cause.code})` : ""}.`;
  } else {
    sentence = `The model request failed: ${oneSentence(e.message ?? String(err))}`;
  }
  return RpcError.internal(oneSentence(redact(sentence, [endpoint.apiKey])));
}

/** Hands every event's data to `onData` until `[DONE]` or the end; what follows `[DONE]` is read and ignored. */
async function readEvents(response: Response, onData: (data: string) => void): Promise<void> {
  const raw = rawBody(response);
  if (raw) return readRaw(raw, onData);
  if (!response.body) throw new Error("the provider answered without a body");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let done = false;
  let ended = false;
  try {
    while (!ended) {
      const read = await reader.read();
      ended = read.done;
      const events = ended ? [...parser.push(decoder.decode()), ...parser.end()] : parser.push(decoder.decode(read.value, { stream: true }));
      for (const ev of events) {
        if (done) continue;
        if (ev.data.startsWith("[DONE]")) done = true;
        else onData(ev.data);
      }
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
  }
}

/** The same over a socket stream from nodeFetch: one synchronous pass per 'data' event. */
function readRaw(raw: Readable, onData: (data: string) => void): Promise<void> {
  const parser = new SseParser();
  let done = false;
  const feed = (events: SseEvent[]): void => {
    for (const ev of events) {
      if (done) continue;
      if (ev.data.startsWith("[DONE]")) done = true;
      else onData(ev.data);
    }
  };
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      raw.destroy();
      reject(err);
    };
    raw.setEncoding("utf8");
    raw.on("data", (text: string) => {
      try {
        feed(parser.push(text));
      } catch (err) {
        fail(err);
      }
    });
    raw.on("end", () => {
      try {
        feed(parser.end());
      } catch (err) {
        fail(err);
        return;
      }
      settled = true;
      resolve();
    });
    raw.on("error", (err) => fail(new TypeError("terminated", { cause: err })));
    // The connection closing before the end is the stream breaking off, as undici reports it.
    raw.on("close", () => fail(new TypeError("terminated", { cause: new Error("other side closed") })));
  });
}

export class OpenAIChatModel implements ChatModel {
  private client: OpenAI | undefined;

  constructor(
    readonly ref: string,
    readonly model: string,
    private readonly endpoint: Endpoint,
    private readonly extraBody: () => Record<string, unknown> = () => ({}),
  ) {}

  private async getClient(): Promise<OpenAI> {
    if (!this.client) {
      const { default: OpenAICtor } = await loadSdk();
      this.client = new OpenAICtor({ baseURL: this.endpoint.baseUrl, apiKey: this.endpoint.apiKey, maxRetries: 1, timeout: 600_000, fetch: nodeFetch });
    }
    return this.client;
  }

  async stream(req: RoundRequest, signal: AbortSignal, onDelta: (d: Delta) => void): Promise<RoundResult> {
    const client = await this.getClient();
    const acc = new RoundAccumulator();
    try {
      const body = {
        model: this.model,
        messages: wellFormed(req.messages),
        stream: true as const,
        stream_options: { include_usage: true },
        ...(req.tools.length > 0 ? { tools: req.tools } : {}),
        ...this.extraBody(),
      };
      // The SDK sends the request (retries, errors by status); the stream is read here, one pass per read.
      const response = await client.chat.completions.create(body as never, { signal }).asResponse();
      const { APIError } = await loadSdk();
      await readEvents(response, (data) => {
        const chunk = JSON.parse(data) as { error?: unknown } | null;
        // An in-stream error event, as the SDK reports it.
        if (chunk?.error) throw new APIError(undefined, chunk.error as object, undefined, response.headers);
        for (const d of acc.add(chunk)) onDelta(d);
      });
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      throw describeProviderError(err, this.endpoint);
    }
    return acc.result();
  }
}
