/**
 * What can go wrong with one request to a provider, the words for it, and whether it is worth
 * another try. Kept free of the SDK so the decisions can be table-tested.
 */
import { RpcError } from "../../shared/jsonrpc.js";
import type { RoundResult } from "./types.js";

/** How hard to try: `retries` after the first try, exponential from `baseMs`, no wait over `maxMs`. */
export interface RetryPolicy {
  retries: number;
  baseMs: number;
  maxMs: number;
  /** A stream (or a request waiting for its headers) silent this long is stopped. */
  idleMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 4, baseMs: 1000, maxMs: 60_000, idleMs: 120_000 };

export type Fault =
  | { kind: "http"; status: number; message: string; retryAfterMs?: number | undefined }
  | { kind: "unreachable"; code?: string | undefined }
  | { kind: "early" }
  | { kind: "stalled"; idleMs: number }
  | { kind: "stream-error"; message: string }
  | { kind: "not-sse"; what: string }
  | { kind: "other"; message: string };

/**
 * `backoff`: the provider is busy or out of reach, which passes (429, 5xx, a refused connection).
 * `once`: the stream broke; tried again once, and only if nothing of it was shown yet.
 */
export function retryKind(f: Fault): "backoff" | "once" | undefined {
  if (f.kind === "http") return f.status === 429 || f.status === 408 || f.status >= 500 ? "backoff" : undefined;
  if (f.kind === "unreachable") return "backoff";
  if (f.kind === "early" || f.kind === "stalled" || f.kind === "stream-error") return "once";
  return undefined;
}

/** `Retry-After` (seconds or an HTTP date) or OpenAI's `retry-after-ms`, in milliseconds. */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * The wait before try number `retry + 1` (`retry` counts from 1): what the provider asked for if
 * it asked, else base·2^(retry-1), both capped by `maxMs`. Undefined when the provider asked for
 * longer than the cap: waiting that long inside a turn helps nobody.
 */
export function backoffMs(retry: number, policy: RetryPolicy, asked?: number): number | undefined {
  if (asked !== undefined) return asked <= policy.maxMs ? asked : undefined;
  return Math.min(policy.maxMs, policy.baseMs * 2 ** (retry - 1));
}

export function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${s >= 10 || Number.isInteger(s) ? Math.round(s) : s.toFixed(1)} s`;
}

/** The fault in one sentence, about the provider at `host`. */
export function describeFault(f: Fault, host: string): string {
  const at = `The model provider at ${host}`;
  switch (f.kind) {
    case "http": {
      const hint = f.status === 401 || f.status === 403 ? " (check the API key; `reasonix setup` can store one)" : f.status === 429 ? " (rate limited)" : "";
      return `${at} answered HTTP ${f.status}${hint}: ${f.message}`;
    }
    case "unreachable":
      return `Could not reach the model provider at ${host}${f.code ? ` (${f.code})` : ""}.`;
    case "early":
      return `${at} closed the stream early, before the answer was complete.`;
    case "stalled":
      return `${at} sent nothing for ${seconds(f.idleMs)}, so the stream was stopped (modelIdleTimeoutSeconds).`;
    case "stream-error":
      return `${at} reported an error in the middle of the stream: ${f.message}`;
    case "not-sse":
      return `${at} answered HTTP 200 with ${f.what} instead of an event stream; check the provider's baseUrl.`;
    case "other":
      return `The model request failed: ${f.message}`;
  }
}

/** A provider failure as the prompt's answer (-32603), with what was shown of the round, if anything. */
export class ProviderFault extends RpcError {
  constructor(
    message: string,
    readonly kind: Fault["kind"],
    /** The round as far as it streamed, when the user already saw part of it. */
    readonly partial?: RoundResult,
  ) {
    super(RpcError.internal(message).code, message);
  }
}

/** What the model's history keeps after an answer the provider cut off. */
export const CUT_SHORT = "[This answer is incomplete: the provider stopped the stream before it was finished.]";
