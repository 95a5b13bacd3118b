/**
 * One model round against a provider that may fail: each try is watched by an idle timer (a stream
 * that stalls after its headers would otherwise wait for the SDK's ten-minute timeout), its response checked for
 * being an event stream at all, its end checked for a finish reason. Busy or unreachable providers
 * are tried again with backoff, a broken stream once when nothing of it was shown yet; every new try
 * is announced to the user. The SDK's own retries are off so that these are the only ones.
 */
import { backoffMs, type Fault, ProviderFault, type RetryPolicy, retryAfterMs, retryKind, seconds } from "./faults.js";
import type { Delta, RoundResult } from "./types.js";
import type { EventBody } from "./event-body.js";
import { SseEventTooLarge } from "./sse.js";
import type { RoundCut } from "./round-limits.js";
import { errorText } from "../../shared/error-text.js";

export interface Accumulator {
  readonly finishReason: string | null;
  /** A part passed its bound: the stream is stopped and the round ends with what came before. */
  readonly cut: RoundCut | undefined;
  add(chunk: unknown): Delta[];
  result(): RoundResult;
}

export interface Opened {
  response: { headers: { get(name: string): string | null } };
  body: EventBody;
}

export interface RoundCall {
  /** Sends the request; its events are read from `body`. */
  open(signal: AbortSignal): Promise<Opened>;
  accumulator(): Accumulator;
  policy: RetryPolicy;
  /** A fault in one redacted sentence. */
  say(f: Fault): string;
}

/** Thrown out of the body's reader to stop reading: the round passed a bound. */
class RoundStopped extends Error {}

class TryFailed extends Error {
  constructor(
    readonly fault: Fault,
    readonly shown: boolean,
    readonly partial: RoundResult,
  ) {
    super(fault.kind);
  }
}

export async function streamRound(call: RoundCall, signal: AbortSignal, onDelta: (d: Delta) => void): Promise<RoundResult> {
  const { policy } = call;
  let onceUsed = false;
  for (let tries = 1; ; tries++) {
    try {
      return await streamTry(call, signal, onDelta);
    } catch (err) {
      if (!(err instanceof TryFailed)) throw err;
      const sentence = call.say(err.fault);
      const kind = retryKind(err.fault);
      const left = tries <= policy.retries;
      let wait: number | undefined;
      let why = tries > 1 ? ` Tried ${tries} times.` : "";
      if (kind === "backoff" && left) {
        const asked = err.fault.kind === "http" ? err.fault.retryAfterMs : undefined;
        wait = backoffMs(tries, policy, asked);
        if (wait === undefined) why = ` It asked to wait ${seconds(asked ?? 0)}, longer than the ${seconds(policy.maxMs)} a turn waits.`;
      } else if (kind === "once" && left && !err.shown && !onceUsed) {
        onceUsed = true;
        wait = 0;
      }
      if (wait === undefined) throw new ProviderFault(`${sentence}${why}`, err.fault.kind, err.shown ? err.partial : undefined);
      const when = wait > 0 ? `in ${seconds(wait)}` : "now";
      onDelta({ kind: "notice", text: `\n\n[notice] ${sentence} Trying again ${when} (try ${tries + 1} of ${policy.retries + 1}).\n\n` });
      await pause(wait, signal);
    }
  }
}

async function streamTry(call: RoundCall, signal: AbortSignal, onDelta: (d: Delta) => void): Promise<RoundResult> {
  const acc = call.accumulator();
  const ctl = new AbortController();
  const onAbort = (): void => ctl.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  /** Counts arms: a chunk read in the turn the timer fired in re-arms it, and is no stall. */
  let arms = 0;
  let over = false;
  // Runs from the request until its headers, then between chunks.
  // refresh() re-arms the same timer: cheaper than a new one for every chunk of a fast stream.
  const arm = (): void => {
    arms++;
    if (timer) {
      timer.refresh();
      return;
    }
    let armsAtFire = 0;
    timer = setTimeout(() => {
      armsAtFire = arms;
      setImmediate(() => {
        if (over || arms !== armsAtFire) return;
        stalled = true;
        ctl.abort(new Error("idle"));
      });
    }, call.policy.idleMs);
  };
  let shown = false;
  let responded = false;
  // The body was read to its end: the request is over and there is nothing to abort.
  let ended = false;
  const fail = (fault: Fault): TryFailed => new TryFailed(stalled ? { kind: "stalled", idleMs: call.policy.idleMs } : fault, shown, acc.result());
  try {
    arm();
    if (signal.aborted) throw signal.reason;
    const { response, body } = await call.open(ctl.signal);
    responded = true;
    arm();
    let chunks = 0;
    await body.consume((chunk) => {
      arm();
      chunks++;
      for (const d of acc.add(chunk)) {
        shown = true;
        onDelta(d);
      }
      if (acc.cut) throw new RoundStopped();
    });
    ended = true;
    if (signal.aborted) return acc.result();
    // Judged by what came, not by its label: some gateways send a good event stream as text/plain.
    const type = response.headers.get("content-type") ?? "";
    if (!stalled && chunks === 0 && !body.finished() && !/event-stream/i.test(type)) {
      throw fail({ kind: "not-sse", what: whatCameBack(body.head(), type) });
    }
    if (stalled || (acc.finishReason === null && !body.finished())) throw fail({ kind: "early" });
    return acc.result();
  } catch (err) {
    if (err instanceof TryFailed) throw err;
    // A bound passed is not a fault: the round ends with what came up to it (and the request is aborted below).
    if (acc.cut) return acc.result();
    if (err instanceof SseEventTooLarge) return { ...acc.result(), cut: { part: "event", limit: err.limit } };
    if (signal.aborted) throw signal.reason ?? err;
    throw fail(classify(err, responded));
  } finally {
    over = true;
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    // Not after a body read to its end: aborting then cancels nothing, and the SDK's listener makes a
    // DOMException (a stack trace) for it, about a tenth of a turn start's CPU with 50 turns at once.
    if (!ctl.signal.aborted && !ended) ctl.abort();
  }
}

/** An SDK or network error as a fault; `responded`: the headers had arrived (the stream broke). */
export function classify(err: unknown, responded: boolean): Fault {
  const e = err as {
    status?: unknown;
    message?: string;
    headers?: Headers;
    error?: { message?: unknown };
    cause?: { code?: string; cause?: { code?: string } };
  };
  const message = errorText(err);
  // The SDK's error classes carry no `name` of their own.
  const name = (err as { constructor?: { name?: string } } | undefined)?.constructor?.name ?? "";
  if (typeof e?.status === "number") return { kind: "http", status: e.status, message, retryAfterMs: retryAfterMs(e.headers) };
  if (!responded) {
    // fetch's "fetch failed" carries the socket's error (ECONNREFUSED, ENOTFOUND) one level down.
    const code = e?.cause?.code ?? e?.cause?.cause?.code;
    if (name === "APIConnectionError" || name === "APIConnectionTimeoutError" || code) return { kind: "unreachable", code };
    return { kind: "other", message };
  }
  if (name === "APIError" || e?.error !== undefined) {
    const inner = e.error?.message;
    return { kind: "stream-error", message: typeof inner === "string" ? inner : message };
  }
  if (err instanceof SyntaxError) return { kind: "stream-error", message: "it sent an event that is not JSON" };
  return { kind: "early" };
}

/** A short name for a body that is not an event stream: its type, and an HTML page's title or a JSON error. */
function whatCameBack(head: string, type: string): string {
  const mime = type.split(";")[0]!.trim();
  if (/html/i.test(mime) || /^\s*<(!doctype|html)/i.test(head)) {
    const title = /<title[^>]*>([^<]{1,120})/i.exec(head)?.[1]?.trim();
    return `an HTML page${title ? ` ("${title}")` : ""}`;
  }
  try {
    const parsed = JSON.parse(head) as { error?: { message?: unknown } | string };
    const msg = typeof parsed.error === "string" ? parsed.error : parsed.error?.message;
    if (typeof msg === "string") return `a JSON error ("${msg.slice(0, 160)}")`;
  } catch {
    // cut at the read limit, or not JSON after all: the type says enough
  }
  return head.trim() === "" ? "an empty body" : `${mime || "an unnamed type"} content`;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = (): void => {
      signal.removeEventListener("abort", stop);
      resolve();
    };
    const stop = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", stop, { once: true });
  });
}
