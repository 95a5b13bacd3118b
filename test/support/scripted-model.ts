/**
 * A scripted OpenAI-compatible chat-completions server for tests (DESIGN §9): real HTTP and SSE on
 * 127.0.0.1, so the daemon's real `openai` SDK is what parses it. Wire shapes follow what OpenAI and
 * DeepSeek actually send, including the quirks a client has to cope with (an empty first content
 * delta, tool-call arguments split across chunks, a separate usage chunk with `choices: []`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { streamResponses } from "./scripted-responses.js";

export interface ScriptedReply {
  /** reasoning_content pieces, streamed first (DeepSeek thinking mode) */
  reasoning?: string[];
  /** content pieces */
  content?: string[];
  toolCalls?: { id?: string; name: string; arguments: string | Record<string, unknown> }[];
  usage?: Partial<{
    prompt_tokens: number;
    completion_tokens: number;
    prompt_cache_hit_tokens: number;
    prompt_cache_miss_tokens: number;
    reasoning_tokens: number;
  }>;
  /** default: "tool_calls" when toolCalls are given, else "stop" */
  finishReason?: "stop" | "tool_calls" | "length";
  /** pause before each chunk after the first (lets tests cancel or kill mid-stream) */
  chunkDelayMs?: number;
  /**
   * with chunkDelayMs: chunk i is due chunkDelayMs × i after the first, as a model generating at a
   * steady pace sends them; a late timer is caught up by sending what is due at once, instead of
   * every later chunk slipping by the lateness (a loaded machine's timers fire 10–20 % late)
   */
  steadyPace?: boolean;
  /** called as each event of the stream is written, numbered from 0 (the opening chunk); benchmarks time delivery with it */
  onSent?: (event: number) => void;
  /** send the given chunks, then keep the stream open (no finish, no [DONE]) until the client goes away */
  hang?: boolean;
  /**
   * send the opening chunk and the first content piece, then wait for this promise before the rest:
   * a turn that is visibly streaming until the test lets it finish
   */
  holdUntil?: Promise<unknown>;
  /** end with [DONE] but never send a finish_reason (some OpenAI-compatible servers do) */
  omitFinish?: boolean;
  /** send the given chunks, then end the response cleanly with no finish_reason and no [DONE] */
  cutShort?: boolean;
  /** answer HTTP 200 with this body instead of a completion (an HTML page from a proxy, say) */
  body?: { contentType: string; text: string };
  /** read the request, then send nothing at all (not even headers) until the client goes away */
  silent?: boolean;
  /** send the given chunks, then destroy the socket: a network failure mid-stream */
  dropConnection?: boolean;
  /** send the given chunks, then an in-stream `data: {"error": ...}` event and end (provider overload) */
  streamError?: unknown;
  /**
   * after the listed pieces, stream `chunks` more pieces of `size` characters each into `part`
   * (for "arguments": one more tool call, named `name`, default write_file, whose arguments never
   * close), made on the fly: a runaway model of any size without holding its output. Writes wait
   * for the socket to drain and stop when the client goes away.
   */
  generate?: { part: "reasoning" | "content" | "arguments"; chunks: number; size: number; name?: string };
  /** reply with this HTTP error status instead of a completion (e.g. 400, 401, 429, 500) */
  status?: number;
  /** JSON body for `status`; default an OpenAI-style `{error:{message,type,param,code}}` */
  errorBody?: unknown;
  /** extra response headers, e.g. `{"retry-after-ms": "0"}` so the openai SDK retries without backoff */
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** parsed JSON body, or undefined when the body was not JSON */
  body: any;
  rawBody: string;
}

const DEFAULT_REPLY: ScriptedReply = { content: ["ok"] };

export class ScriptedModel {
  readonly url: string;
  readonly requests: RecordedRequest[] = [];
  /** used when the queue is empty; default replies with content ["ok"] */
  respond: ((req: RecordedRequest, index: number) => ScriptedReply) | undefined;
  /** When set, GET /models answers 401 to any other bearer key, as a real provider does. */
  modelsKey: string | undefined;
  /**
   * When set, a request whose prompt tokens (as `usage` reports them: a quarter of the serialized
   * tools and messages) exceed it is refused with HTTP 400, as DeepSeek refuses an over-long context.
   */
  contextWindow: number | undefined;

  private readonly queue: ScriptedReply[] = [];
  private readonly keys = new WeakMap<RecordedRequest, Buffer>();
  private readonly sockets = new Set<Socket>();
  private readonly waiters = new Set<() => void>();
  private abortedCount = 0;
  private idCounter = 0;
  private closed = false;

  private constructor(
    private readonly server: Server,
    port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<ScriptedModel> {
    let model: ScriptedModel | undefined;
    const server = createServer((req, res) => {
      void model!.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: `scripted model failed: ${String(err)}`, type: "server_error" } }));
        } else {
          res.destroy();
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("scripted model: no TCP address");
    model = new ScriptedModel(server, address.port);
    return model;
  }

  /** streams the client closed before the reply was complete (cancel, kill, timeout) */
  get aborted(): number {
    return this.abortedCount;
  }

  enqueue(...replies: ScriptedReply[]): void {
    this.queue.push(...replies);
  }

  /** replies still queued (a test that scripted N rounds can assert they were all consumed) */
  get pending(): number {
    return this.queue.length;
  }

  waitForRequests(n: number, timeoutMs = 10_000): Promise<void> {
    return this.waitUntil(
      () => this.requests.length >= n,
      timeoutMs,
      () => `${n} chat requests within ${timeoutMs} ms, got ${this.requests.length}`,
    );
  }

  /**
   * Until `n` streams were aborted. The client that aborts may be another process (the daemon
   * behind the process connector): its answer to the editor can arrive before the model sees the
   * connection close.
   */
  waitForAborted(n: number, timeoutMs = 10_000): Promise<void> {
    return this.waitUntil(
      () => this.abortedCount >= n,
      timeoutMs,
      () => `${n} aborted streams within ${timeoutMs} ms, got ${this.abortedCount}`,
    );
  }

  private countAborted(): void {
    this.abortedCount++;
    for (const waiter of [...this.waiters]) waiter();
  }

  private async waitUntil(done: () => boolean, timeoutMs: number, expected: () => string): Promise<void> {
    if (done()) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`scripted model: expected ${expected()}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Hanging streams never end by themselves; without this server.close() would wait forever.
    for (const socket of this.sockets) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const path = (req.url ?? "/").split("?")[0]!;

    if (req.method === "GET" && /^(\/v1)?\/models\/?$/.test(path)) {
      if (this.modelsKey !== undefined && req.headers.authorization !== `Bearer ${this.modelsKey}`) {
        sendJson(res, 401, {
          error: { message: "Authentication Fails, Your api key is invalid", type: "authentication_error", param: null, code: "invalid_request_error" },
        });
        return;
      }
      sendJson(res, 200, {
        object: "list",
        data: ["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-chat", "deepseek-reasoner"].map((id) => ({
          id,
          object: "model",
          owned_by: "scripted",
        })),
      });
      return;
    }
    const responsesApi = req.method === "POST" && /^(\/v1)?\/responses\/?$/.test(path);
    if (!responsesApi && (req.method !== "POST" || !/^(\/v1)?\/chat\/completions\/?$/.test(path))) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error", param: null, code: null } });
      return;
    }

    let body: any;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = { method: req.method ?? "POST", path, headers: { ...req.headers }, body, rawBody };
    const index = this.requests.length;
    this.requests.push(recorded);
    for (const waiter of [...this.waiters]) waiter();

    if (body === undefined || typeof body !== "object") {
      sendJson(res, 400, { error: { message: "request body is not JSON", type: "invalid_request_error", param: null, code: null } });
      return;
    }

    if (this.contextWindow !== undefined && this.promptTokens(recorded) > this.contextWindow) {
      const message = `This model's maximum context length is ${this.contextWindow} tokens. However, you requested ${this.promptTokens(recorded)} tokens. Please reduce the length of the messages.`;
      sendJson(res, 400, { error: { message, type: "invalid_request_error", param: null, code: "invalid_request_error" } });
      return;
    }
    const reply = this.queue.shift() ?? this.respond?.(recorded, index) ?? DEFAULT_REPLY;
    const extraHeaders = reply.headers ?? {};

    if (reply.status !== undefined && reply.status >= 300) {
      sendJson(res, reply.status, reply.errorBody ?? defaultErrorBody(reply.status), extraHeaders);
      return;
    }

    if (reply.body) {
      res.writeHead(200, { "content-type": reply.body.contentType, "content-length": Buffer.byteLength(reply.body.text), ...extraHeaders });
      res.end(reply.body.text);
      return;
    }
    if (reply.silent) {
      res.on("close", () => {
        if (!this.closed) this.countAborted();
      });
      await new Promise<void>((resolve) => res.once("close", () => resolve()));
      return;
    }

    if (responsesApi) {
      await streamResponses(res, reply, String(++this.idCounter), typeof body.model === "string" ? body.model : "scripted");
      return;
    }
    const id = `chatcmpl-scripted-${++this.idCounter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === "string" ? body.model : "deepseek-v4-flash";
    const usage = this.usageFor(reply, recorded);

    if (body.stream === true) {
      await this.stream(req, res, reply, { id, created, model, usage, includeUsage: body.stream_options?.include_usage === true });
    } else {
      this.complete(res, reply, { id, created, model, usage }, extraHeaders);
    }
  }

  private complete(
    res: ServerResponse,
    reply: ScriptedReply,
    meta: { id: string; created: number; model: string; usage: object },
    headers: Record<string, string>,
  ): void {
    const toolCalls = normalizeToolCalls(reply, meta.id);
    const message: Record<string, unknown> = {
      role: "assistant",
      content: reply.content ? reply.content.join("") : toolCalls.length > 0 ? null : "",
    };
    if (reply.reasoning) message.reasoning_content = reply.reasoning.join("");
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    }
    sendJson(
      res,
      200,
      {
        id: meta.id,
        object: "chat.completion",
        created: meta.created,
        model: meta.model,
        system_fingerprint: "fp_scripted",
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(reply, toolCalls.length) }],
        usage: meta.usage,
      },
      headers,
    );
  }

  private async stream(
    req: IncomingMessage,
    res: ServerResponse,
    reply: ScriptedReply,
    meta: { id: string; created: number; model: string; usage: object; includeUsage: boolean },
  ): Promise<void> {
    let clientGone = false;
    let finished = false;
    res.on("close", () => {
      // close() tearing down a hanging stream is the test ending, not the client aborting.
      if (!finished && !this.closed) {
        clientGone = true;
        this.countAborted();
      }
    });

    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      ...(reply.headers ?? {}),
    });
    res.flushHeaders();

    const base = { id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, system_fingerprint: "fp_scripted" };
    // OpenAI sends `usage: null` on every chunk but the last once include_usage is on.
    const usageNull = meta.includeUsage ? { usage: null } : {};
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...usageNull,
    });

    const toolCalls = normalizeToolCalls(reply, meta.id);
    const hasReasoning = reply.reasoning !== undefined;
    const events: object[] = [];
    // The first delta carries the role; DeepSeek's thinking mode also opens with an empty reasoning_content.
    events.push(chunk(hasReasoning ? { role: "assistant", content: null, reasoning_content: "" } : { role: "assistant", content: "" }));
    for (const piece of reply.reasoning ?? []) events.push(chunk({ content: null, reasoning_content: piece }));
    for (const piece of reply.content ?? []) events.push(chunk(hasReasoning ? { content: piece, reasoning_content: null } : { content: piece }));
    toolCalls.forEach((call, index) => {
      events.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
      for (const piece of splitPieces(call.arguments, 3)) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
      }
    });

    let sent = 0;
    let dueAt = 0;
    const pause = async (): Promise<void> => {
      if (!reply.chunkDelayMs) return;
      if (!reply.steadyPace) return sleep(reply.chunkDelayMs);
      dueAt += reply.chunkDelayMs;
      const wait = dueAt - performance.now();
      if (wait > 0) await sleep(wait);
    };
    const write = async (data: string, first: boolean): Promise<boolean> => {
      if (first) dueAt = performance.now();
      else await pause();
      if (clientGone || res.destroyed) return false;
      // Backpressure: a generated stream of hundreds of MiB must not pile up in this process.
      if (!res.write(`data: ${data}\n\n`)) await drained(res);
      reply.onSent?.(sent++);
      return true;
    };

    // The opening chunk, the reasoning pieces, then the first content piece: where holdUntil waits.
    const holdAt = reply.holdUntil && (reply.content?.length ?? 0) > 0 ? 1 + (reply.reasoning?.length ?? 0) : -1;
    let first = true;
    for (const [i, event] of events.entries()) {
      if (!(await write(JSON.stringify(event), first))) return;
      first = false;
      if (i === holdAt) {
        await reply.holdUntil;
        if (clientGone || res.destroyed) return;
      }
    }

    if (reply.generate) {
      const { part, chunks, size } = reply.generate;
      const piece = "x".repeat(size);
      const index = toolCalls.length;
      if (part === "arguments") {
        const open = {
          tool_calls: [
            { index, id: `call_generated_${index}`, type: "function", function: { name: reply.generate.name ?? "write_file", arguments: '{"content":"' } },
          ],
        };
        if (!(await write(JSON.stringify(chunk(open)), false))) return;
      }
      const delta =
        part === "reasoning"
          ? { content: null, reasoning_content: piece }
          : part === "content"
            ? { content: piece }
            : { tool_calls: [{ index, function: { arguments: piece } }] };
      const event = JSON.stringify(chunk(delta));
      for (let i = 0; i < chunks; i++) if (!(await write(event, false))) return;
    }

    if (reply.hang) {
      // Left open on purpose; the "close" handler counts it as aborted when the client gives up.
      await new Promise<void>((resolve) => res.once("close", () => resolve()));
      return;
    }
    if (reply.cutShort) {
      finished = true;
      res.end();
      return;
    }
    if (reply.dropConnection) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      finished = true;
      res.destroy();
      return;
    }
    if (reply.streamError !== undefined) {
      const payload = { error: reply.streamError };
      if (!(await write(JSON.stringify(payload), false))) return;
      finished = true;
      res.end();
      return;
    }

    if (!reply.omitFinish && !(await write(JSON.stringify(chunk({}, finishReasonOf(reply, toolCalls.length))), false))) return;
    if (meta.includeUsage) {
      if (!(await write(JSON.stringify({ ...base, choices: [], usage: meta.usage }), false))) return;
    }
    if (!(await write("[DONE]", false))) return;
    finished = true;
    res.end();
  }

  /** The prompt tokens a request counts as by default: a quarter of its serialized tools and messages. */
  promptTokens(req: RecordedRequest): number {
    return Math.max(1, Math.ceil(this.cacheKey(req).length / 2 / 4));
  }

  /** Serialized once per request: usage compares every request with every earlier one. */
  private cacheKey(req: RecordedRequest): Buffer {
    let key = this.keys.get(req);
    if (key === undefined) {
      key = Buffer.from(cacheKey(req.body), "utf16le");
      this.keys.set(req, key);
    }
    return key;
  }

  /**
   * Defaults imitate DeepSeek's prefix cache roughly: the part of this request's serialized tools
   * and messages that repeats an earlier request counts as cache hits, so tests can watch the
   * append-only property (DESIGN §6) through the usage the agent reports.
   */
  private usageFor(reply: ScriptedReply, req: RecordedRequest): object {
    const key = this.cacheKey(req);
    let common = 0;
    for (const earlier of this.requests) {
      if (earlier === req) continue;
      common = Math.max(common, commonPrefixLength(key, this.cacheKey(earlier)));
    }
    const promptDefault = this.promptTokens(req);
    const prompt = reply.usage?.prompt_tokens ?? promptDefault;
    const hit = reply.usage?.prompt_cache_hit_tokens ?? Math.min(prompt, Math.floor(common / 4));
    const miss = reply.usage?.prompt_cache_miss_tokens ?? Math.max(0, prompt - hit);
    const reasoningChars = (reply.reasoning ?? []).join("").length;
    const reasoning = reply.usage?.reasoning_tokens ?? Math.ceil(reasoningChars / 4);
    const outputChars = (reply.content ?? []).join("").length + normalizeToolCalls(reply, "x").reduce((n, c) => n + c.name.length + c.arguments.length, 0);
    const completion = reply.usage?.completion_tokens ?? Math.max(1, reasoning + Math.ceil(outputChars / 4));
    return {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_cache_hit_tokens: hit,
      prompt_cache_miss_tokens: miss,
      completion_tokens_details: { reasoning_tokens: reasoning },
      prompt_tokens_details: { cached_tokens: hit },
    };
  }
}

function normalizeToolCalls(reply: ScriptedReply, responseId: string): { id: string; name: string; arguments: string }[] {
  return (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${responseId.replace(/\W/g, "")}_${i}`,
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
  }));
}

function finishReasonOf(reply: ScriptedReply, toolCallCount: number): string {
  return reply.finishReason ?? (toolCallCount > 0 ? "tool_calls" : "stop");
}

/** Splits on code points so a piece never ends in half a surrogate pair. */
function splitPieces(text: string, parts: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.max(1, Math.ceil(chars.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

function cacheKey(body: any): string {
  if (!body || typeof body !== "object") return "";
  return JSON.stringify(body.tools ?? null) + JSON.stringify(body.messages ?? null);
}

/**
 * The characters two keys (UTF-16 code units) share at their start, by binary search with
 * `Buffer#compare` (a memcmp, no copies): fifty sessions' requests share a 20 KB prefix, and a
 * character loop over every pair was most of the model's CPU in the streaming benchmark.
 */
function commonPrefixLength(a: Buffer, b: Buffer): number {
  const same = (units: number): boolean => a.compare(b, 0, units * 2, 0, units * 2) === 0;
  let lo = 0;
  let hi = Math.min(a.length, b.length) / 2;
  if (same(hi)) return hi;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (same(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function defaultErrorBody(status: number): unknown {
  const type = status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message: `scripted error ${status}`, type, param: null, code: null } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Until the socket takes more, or closes. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
