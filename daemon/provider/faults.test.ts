import { test } from "node:test";
import assert from "node:assert/strict";
import { backoffMs, DEFAULT_RETRY_POLICY, describeFault, retryAfterMs, retryKind, seconds } from "./faults.js";

const headers = (h: Record<string, string>) => new Headers(h);

test("Retry-After is read as seconds, as an HTTP date, or as OpenAI's retry-after-ms", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfterMs(headers({ "retry-after": "7" }), now), 7000);
  assert.equal(retryAfterMs(headers({ "retry-after": "Thu, 01 Jan 2026 00:00:30 GMT" }), now), 30_000);
  assert.equal(retryAfterMs(headers({ "retry-after": "Wed, 31 Dec 2025 00:00:30 GMT" }), now), 0, "a date in the past means now");
  assert.equal(retryAfterMs(headers({ "retry-after-ms": "250", "retry-after": "9" }), now), 250);
  assert.equal(retryAfterMs(headers({ "retry-after": "soon" }), now), undefined);
  assert.equal(retryAfterMs(headers({}), now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

test("backoff doubles from the base, stops at the cap, and honours what the provider asked unless it is over the cap", () => {
  const p = { ...DEFAULT_RETRY_POLICY, baseMs: 1000, maxMs: 5000 };
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => backoffMs(n, p)),
    [1000, 2000, 4000, 5000, 5000],
  );
  assert.equal(backoffMs(1, p, 3000), 3000);
  assert.equal(backoffMs(3, p, 0), 0);
  assert.equal(backoffMs(1, p, 60_000), undefined, "asked for longer than a turn waits: give up");
});

test("only passing faults are retried: 429, 408 and 5xx with backoff, a broken stream once, never a 4xx or a wrong body", () => {
  assert.equal(retryKind({ kind: "http", status: 429, message: "" }), "backoff");
  assert.equal(retryKind({ kind: "http", status: 503, message: "" }), "backoff");
  assert.equal(retryKind({ kind: "http", status: 408, message: "" }), "backoff");
  assert.equal(retryKind({ kind: "http", status: 400, message: "" }), undefined);
  assert.equal(retryKind({ kind: "http", status: 401, message: "" }), undefined);
  assert.equal(retryKind({ kind: "unreachable", code: "ECONNREFUSED" }), "backoff");
  assert.equal(retryKind({ kind: "early" }), "once");
  assert.equal(retryKind({ kind: "stalled", idleMs: 1 }), "once");
  assert.equal(retryKind({ kind: "stream-error", message: "overloaded" }), "once");
  assert.equal(retryKind({ kind: "not-sse", what: "an HTML page" }), undefined);
});

test("each fault says what happened, and only a refused connection says 'could not reach'", () => {
  const host = "api.example.com";
  assert.match(describeFault({ kind: "early" }, host), /^The model provider at api\.example\.com closed the stream early/);
  assert.match(describeFault({ kind: "stalled", idleMs: 120_000 }, host), /sent nothing for 120 s.*modelIdleTimeoutSeconds/);
  assert.match(
    describeFault({ kind: "not-sse", what: 'an HTML page ("Just a moment")' }, host),
    /HTTP 200 with an HTML page \("Just a moment"\) instead of an event stream/,
  );
  assert.match(describeFault({ kind: "http", status: 429, message: "slow down" }, host), /HTTP 429 \(rate limited\): slow down/);
  assert.match(describeFault({ kind: "stream-error", message: "Server overloaded" }, host), /error in the middle of the stream: Server overloaded/);
  assert.match(describeFault({ kind: "unreachable", code: "ECONNREFUSED" }, host), /^Could not reach .* \(ECONNREFUSED\)/);
  for (const f of [{ kind: "early" }, { kind: "stalled", idleMs: 5 }, { kind: "not-sse", what: "x" }] as const) {
    assert.doesNotMatch(describeFault(f, host), /could not reach/i);
  }
  assert.equal(seconds(20), "20 ms");
  assert.equal(seconds(1500), "1.5 s");
  assert.equal(seconds(30_000), "30 s");
});
