/**
 * JSON-RPC 2.0 in both directions over any text transport: one message per call of `receive`,
 * one message per call of `send`. Transport-agnostic on purpose (the MCP SDK's split): the daemon
 * runs one peer per WebSocket, tests run one over stdio.
 */
import { afterBound } from "./bound.js";
import { ExactId, rawTopLevelId } from "./exact-id.js";
import { ErrorCode, RpcError, type RpcErrorObject } from "./rpc-errors.js";

export { ExactId, rawTopLevelId } from "./exact-id.js";
export { clipped, QUOTE_MAX_CHARS } from "./quote.js";
export { ERRORS, ErrorCode, RpcError, type RpcErrorObject } from "./rpc-errors.js";
export type JsonRpcId = number | string | null | ExactId;

export type Incoming =
  | { kind: "request"; id: JsonRpcId; method: string; params: unknown }
  | { kind: "notification"; method: string; params: unknown }
  | { kind: "response"; id: JsonRpcId; result: unknown }
  | { kind: "error"; id: JsonRpcId; error: RpcErrorObject }
  | { kind: "invalid"; id: JsonRpcId; error: RpcError };

function isId(v: unknown): v is JsonRpcId {
  return v === null || typeof v === "string" || v instanceof ExactId || (typeof v === "number" && Number.isFinite(v));
}

/** Classifies one text frame without throwing. */
export function classify(text: string): Incoming {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return { kind: "invalid", id: null, error: RpcError.parseError() };
  }
  if (Array.isArray(msg)) {
    return { kind: "invalid", id: null, error: RpcError.invalidRequest("batches are not supported") };
  }
  if (msg === null || typeof msg !== "object") {
    return { kind: "invalid", id: null, error: RpcError.invalidRequest("a message must be a JSON object") };
  }
  const m = msg as Record<string, unknown>;
  if (typeof m.id === "number" && !Number.isSafeInteger(m.id)) {
    const raw = rawTopLevelId(text);
    if (raw !== undefined && String(m.id) !== raw) m.id = new ExactId(raw);
  }
  const hasId = "id" in m;
  const id = hasId && isId(m.id) ? m.id : null;
  if (m.jsonrpc !== "2.0") {
    return { kind: "invalid", id, error: RpcError.invalidRequest('"jsonrpc" must be "2.0"') };
  }
  if (hasId && !isId(m.id)) {
    return { kind: "invalid", id: null, error: RpcError.invalidRequest('"id" must be a string, a number or null') };
  }
  if ("method" in m) {
    if (typeof m.method !== "string" || m.method.length === 0) {
      return { kind: "invalid", id, error: RpcError.invalidRequest('"method" must be a non-empty string') };
    }
    if (m.params !== undefined && (m.params === null || typeof m.params !== "object")) {
      return { kind: "invalid", id, error: RpcError.invalidRequest('"params" must be an object or an array') };
    }
    return hasId ? { kind: "request", id, method: m.method, params: m.params } : { kind: "notification", method: m.method, params: m.params };
  }
  if (hasId && "result" in m) return { kind: "response", id, result: m.result };
  if (hasId && m.error && typeof m.error === "object") {
    const e = m.error as Record<string, unknown>;
    return {
      kind: "error",
      id,
      error: {
        code: typeof e.code === "number" ? e.code : ErrorCode.InternalError,
        message: typeof e.message === "string" ? e.message : "error",
        data: e.data,
      },
    };
  }
  return { kind: "invalid", id, error: RpcError.invalidRequest("neither a request, a notification nor a response") };
}

/**
 * A handler result with work to do once the response is on the wire (e.g. the
 * `available_commands_update` that must follow the `session/new` answer that carries the id).
 */
export class ResultThen {
  constructor(
    readonly result: unknown,
    readonly after: () => void,
  ) {}
}

export interface RequestContext {
  id: JsonRpcId;
  method: string;
  /** Aborts on `$/cancel_request` for this id, or when the connection closes. */
  signal: AbortSignal;
}

export interface PeerHandlers {
  request(method: string, params: unknown, ctx: RequestContext): Promise<unknown> | unknown;
  notification(method: string, params: unknown): void;
  /** Turns a thrown value into a JSON-RPC error; the default keeps RpcErrors and hides the rest. */
  toRpcError?(err: unknown, method: string): RpcError;
}

/**
 * How much one client may have the peer work on at once. Requests beyond `maxInFlight` wait in
 * arrival order and `onPressure(true)` asks the transport to stop reading until they drain, so a
 * client that pipelines thousands of requests meets backpressure instead of growing our memory.
 */
export interface InFlightLimit {
  maxInFlight: number;
  /** Requests that may run for a whole turn (prompts): bounded elsewhere, and never queued here. */
  exempt?(method: string): boolean;
  onPressure?(paused: boolean): void;
}

/** What may wait beyond the limit while the transport's own buffers drain: past it, an error. */
export const MAX_WAITING_REQUESTS = 4096;

export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  cleanup(): void;
}

export class ConnectionClosedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "ConnectionClosedError";
  }
}

export class JsonRpcPeer {
  private nextId = 0;
  private readonly pending = new Map<JsonRpcId, Pending>();
  private readonly running = new Map<JsonRpcId, AbortController>();
  private closedReason: Error | undefined;
  private inFlight = 0;
  private readonly waiting: Array<{ id: JsonRpcId; method: string; params: unknown }> = [];

  constructor(
    /** `notification`: the text answers nobody (a transport may hold it back a little to batch it). */
    private readonly sendText: (text: string, notification: boolean) => void,
    private readonly handlers: PeerHandlers,
    private readonly limit?: InFlightLimit,
  ) {}

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  receive(text: string): void {
    const msg = classify(text);
    switch (msg.kind) {
      case "invalid":
        this.write({ jsonrpc: "2.0", id: msg.id, error: msg.error.toObject() });
        return;
      case "notification":
        this.onNotification(msg.method, msg.params);
        return;
      case "request":
        this.admit(msg.id, msg.method, msg.params);
        return;
      case "response":
      case "error": {
        const key = typeof msg.id === "string" && /^\d+$/.test(msg.id) ? Number(msg.id) : msg.id;
        const p = this.pending.get(key);
        if (!p) return; // late or duplicate answer: nothing waits for it any more
        this.pending.delete(key);
        p.cleanup();
        if (msg.kind === "response") p.resolve(msg.result);
        else p.reject(new RpcError(msg.error.code, msg.error.message, msg.error.data));
        return;
      }
    }
  }

  request(method: string, params: unknown, opts: RequestOptions = {}): Promise<unknown> {
    if (this.closedReason) return Promise.reject(this.closedReason);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        cleanup();
        this.notify("$/cancel_request", { requestId: id });
        reject(RpcError.cancelled());
      };
      const cleanup = (): void => {
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      if (opts.signal?.aborted) {
        reject(RpcError.cancelled());
        return;
      }
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      if (opts.timeoutMs !== undefined) {
        timer = afterBound(opts.timeoutMs, () => {
          if (!this.pending.has(id)) return;
          this.pending.delete(id);
          cleanup();
          reject(RpcError.internal(`${method} got no answer within ${opts.timeoutMs} ms`));
        });
        timer.unref();
      }
      this.pending.set(id, { resolve, reject, cleanup });
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (this.closedReason) return;
    const body = JSON.stringify(params); // the envelope as text, the same bytes: one per streamed chunk per window
    this.sendText(`{"jsonrpc":"2.0","method":${JSON.stringify(method)}${body === undefined ? "" : `,"params":${body}`}}`, true);
  }

  /** Rejects every pending request and aborts every running handler. Idempotent. */
  close(reason: Error = new ConnectionClosedError("connection closed")): void {
    if (this.closedReason) return;
    this.closedReason = reason;
    for (const p of this.pending.values()) {
      p.cleanup();
      p.reject(reason);
    }
    this.pending.clear();
    for (const c of this.running.values()) c.abort(reason);
    this.running.clear();
  }

  private onNotification(method: string, params: unknown): void {
    if (method === "$/cancel_request") {
      const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
      if (requestId !== undefined && isId(requestId)) this.running.get(requestId)?.abort(RpcError.cancelled());
      return;
    }
    try {
      this.handlers.notification(method, params);
    } catch {
      // A notification never gets an answer, not even an error one.
    }
  }

  private admit(id: JsonRpcId, method: string, params: unknown): void {
    const limit = this.limit;
    if (!limit || limit.exempt?.(method)) {
      void this.onRequest(id, method, params);
      return;
    }
    if (this.inFlight < limit.maxInFlight) {
      this.inFlight++;
      void this.onRequest(id, method, params).finally(() => this.release());
      return;
    }
    if (this.waiting.length >= MAX_WAITING_REQUESTS) {
      this.write({
        jsonrpc: "2.0",
        id,
        error: RpcError.internal(
          `Too many requests in flight on this connection (${limit.maxInFlight} running, ${this.waiting.length} waiting); wait for answers before sending more`,
        ).toObject(),
      });
      return;
    }
    this.waiting.push({ id, method, params });
    if (this.waiting.length === 1) limit.onPressure?.(true);
  }

  private release(): void {
    this.inFlight--;
    const next = this.waiting.shift();
    if (next) {
      this.inFlight++;
      void this.onRequest(next.id, next.method, next.params).finally(() => this.release());
      if (this.waiting.length === 0) this.limit?.onPressure?.(false);
    }
  }

  private async onRequest(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const controller = new AbortController();
    this.running.set(id, controller);
    try {
      const result = await this.handlers.request(method, params, { id, method, signal: controller.signal });
      if (result instanceof ResultThen) {
        this.write({ jsonrpc: "2.0", id, result: result.result ?? {} });
        result.after();
      } else {
        this.write({ jsonrpc: "2.0", id, result: result ?? {} });
      }
    } catch (err) {
      const rpc = this.handlers.toRpcError ? this.handlers.toRpcError(err, method) : err instanceof RpcError ? err : RpcError.internal("Internal error");
      this.write({ jsonrpc: "2.0", id, error: rpc.toObject() });
    } finally {
      if (this.running.get(id) === controller) this.running.delete(id);
    }
  }

  private write(msg: Record<string, unknown>): void {
    if (this.closedReason) return;
    if (msg.id instanceof ExactId) {
      // "jsonrpc" then "id" first, as in every other answer (the shim reads responses by that prefix).
      const { jsonrpc: _version, id, ...rest } = msg;
      const body = JSON.stringify(rest);
      this.sendText(`{"jsonrpc":"2.0","id":${id.text}${body === "{}" ? "}" : `,${body.slice(1)}`}`, false);
      return;
    }
    this.sendText(JSON.stringify(msg), msg.id === undefined);
  }
}
