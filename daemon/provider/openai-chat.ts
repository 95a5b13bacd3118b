/**
 * A ChatModel on the official openai SDK. The SDK is imported lazily so that the daemon binds its
 * socket and answers `initialize` before paying for it.
 */
import type OpenAI from "openai";
import { RpcError } from "../../shared/jsonrpc.js";
import type { ChatMessage, ChatModel, Delta, RoundRequest, RoundResult, Usage } from "./types.js";
import type { Endpoint } from "./registry.js";
import { oneSentence, redact } from "../../shared/redact.js";
import { DEFAULT_RETRY_POLICY, describeFault, type Fault, type RetryPolicy } from "./faults.js";
import { classify, streamRound } from "./round-stream.js";
import { nodeFetch } from "./node-fetch.js";
import { eventBody } from "./event-body.js";
import { MAX_TOOL_CALLS, ROUND_LIMITS, type RoundCut } from "./round-limits.js";

let sdk: Promise<typeof import("./openai-sdk.js")> | undefined;
const loadSdk = (): Promise<typeof import("./openai-sdk.js")> => (sdk ??= import("./openai-sdk.js"));

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
  /** Set when a part passed its bound (round-limits.ts): nothing more is taken, the stream is to stop. */
  cut: RoundCut | undefined;
  private readonly calls: Array<{ id: string; name: string; arguments: string }> = [];
  private readonly spent = { reasoning: 0, text: 0, arguments: 0 };

  /** Counts `piece` against its part's bound; false (and `cut` set) when it would pass it. */
  private spend(part: keyof typeof ROUND_LIMITS, piece: string): boolean {
    const total = this.spent[part] + Buffer.byteLength(piece);
    if (total > ROUND_LIMITS[part]) {
      this.cut = { part, limit: ROUND_LIMITS[part] };
      return false;
    }
    this.spent[part] = total;
    return true;
  }

  /** Returns the user-visible deltas in this chunk, in order; none once the round was cut. */
  add(chunk: unknown): Delta[] {
    const out: Delta[] = [];
    if (this.cut) return out;
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
        if (!this.spend("reasoning", thought)) return out;
        this.reasoning += thought;
        out.push({ kind: "thought", text: thought });
      }
      if (d.content) {
        if (!this.spend("text", d.content)) return out;
        this.content += d.content;
        out.push({ kind: "text", text: d.content });
      }
      for (const tc of d.tool_calls ?? []) {
        const i = tc.index ?? this.calls.length;
        // The index is the provider's word: 4 294 967 294 would make a sparse array walked to its length.
        if (!Number.isInteger(i) || i < 0 || i >= MAX_TOOL_CALLS) {
          this.cut = { part: "calls", limit: MAX_TOOL_CALLS };
          return out;
        }
        const name = tc.function?.name ?? "";
        const args = tc.function?.arguments ?? "";
        if (!this.spend("arguments", name + args)) return out;
        const call = (this.calls[i] ??= { id: "", name: "", arguments: "" });
        if (tc.id) call.id = tc.id;
        call.name += name;
        call.arguments += args;
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
      ...(this.cut ? { cut: this.cut } : {}),
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

export function describeProviderError(err: unknown, endpoint: Endpoint, responded = false): RpcError {
  return RpcError.internal(sayFault(classify(err, responded), endpoint));
}

function sayFault(f: Fault, endpoint: Endpoint): string {
  let host = endpoint.baseUrl;
  try {
    host = new URL(endpoint.baseUrl).host;
  } catch {
    // keep the raw value; it is configuration, not a secret
  }
  return oneSentence(redact(describeFault(f, host), [endpoint.apiKey]));
}

/**
 * One SDK client per endpoint, shared by every turn that uses it: a session creates a model per
 * turn, and building a client (every resource class of the SDK) each time was work at every turn
 * start. Keyed by address and key; the few endpoints a daemon sees never warrant more than a handful.
 */
const clients = new Map<string, OpenAI>();
const MAX_CLIENTS = 16;

async function clientFor(endpoint: Endpoint): Promise<OpenAI> {
  const key = `${endpoint.baseUrl}\n${endpoint.apiKey}`;
  const known = clients.get(key);
  if (known) return known;
  const { OpenAI: OpenAICtor } = await loadSdk();
  const client = new OpenAICtor({
    baseURL: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    maxRetries: 0,
    timeout: 600_000,
    logLevel: "off",
    // node:http under the SDK: undici's web streams were a quarter of the daemon's CPU per chunk.
    fetch: nodeFetch,
  });
  if (clients.size >= MAX_CLIENTS) clients.clear();
  clients.set(key, client);
  return client;
}

export class OpenAIChatModel implements ChatModel {
  constructor(
    readonly ref: string,
    readonly model: string,
    private readonly endpoint: Endpoint,
    private readonly extraBody: () => Record<string, unknown> = () => ({}),
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async stream(req: RoundRequest, signal: AbortSignal, onDelta: (d: Delta) => void): Promise<RoundResult> {
    const client = await clientFor(this.endpoint);
    const body = {
      model: this.model,
      messages: wellFormed(req.messages),
      stream: true as const,
      stream_options: { include_usage: true },
      ...(req.tools.length > 0 ? { tools: req.tools } : {}),
      ...(req.toolChoice && req.tools.length > 0 ? { tool_choice: req.toolChoice } : {}),
      ...this.extraBody(),
    };
    return streamRound(
      {
        // The SDK sends the request and reports errors by status; the stream is read here, one pass per read.
        open: async (s) => {
          const response = await client.chat.completions.create(body as never, { signal: s }).asResponse();
          const { APIError } = await loadSdk();
          return { response, body: eventBody(response, (error) => new APIError(undefined, error, undefined, response.headers)) };
        },
        accumulator: () => new RoundAccumulator(),
        policy: this.policy,
        say: (f) => sayFault(f, this.endpoint),
      },
      signal,
      onDelta,
    );
  }
}
