import assert from "node:assert/strict";
import { test } from "node:test";
import { SseEventTooLarge, SseParser } from "./sse.js";

test("events split anywhere across reads come out whole and in order", () => {
  const text = 'data: {"a":1}\n\ndata: {"b":2}\r\n\r\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
  for (let cut = 0; cut < text.length; cut++) {
    const p = new SseParser();
    const events = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()];
    assert.deepEqual(events, [
      { event: null, data: '{"a":1}' },
      { event: null, data: '{"b":2}' },
      { event: "x", data: "one\ntwo" },
      { event: null, data: "[DONE]" },
    ]);
  }
});

test("a field without a space after the colon, and a last event without its blank line", () => {
  const p = new SseParser();
  assert.deepEqual(p.push("data:x\n\ndata: y"), [{ event: null, data: "x" }]);
  assert.deepEqual(p.end(), [{ event: null, data: "y" }]);
});

test("blank lines alone make no event", () => {
  const p = new SseParser();
  assert.deepEqual([...p.push("\n\n\r\n"), ...p.end()], []);
});

test("a line spread over a hundred thousand reads is searched once: linear, and whole at the end", { timeout: 10_000 }, () => {
  const p = new SseParser();
  const piece = "x".repeat(100);
  const events = [...p.push("data: ")];
  // Each read used to search the whole pending line again: 10 million characters, searched 100 000 times.
  for (let i = 0; i < 100_000; i++) events.push(...p.push(piece));
  events.push(...p.push("\n\ndata: next\n\n"));
  assert.equal(events.length, 2);
  assert.equal(events[0]!.data.length, 10_000_000);
  assert.deepEqual(events[1], { event: null, data: "next" });
});

test("a line or an event's data past the bound throws, after the events completed before it", () => {
  const line = new SseParser(10);
  assert.throws(() => line.push("data: 0123456789"), SseEventTooLarge);
  const lines = new SseParser(10);
  assert.deepEqual(lines.push("data: 12345\n"), []);
  assert.throws(() => lines.push("data: 67890\n"), SseEventTooLarge, "two data lines of one event count together");
  const after = new SseParser(10);
  assert.deepEqual(after.push("data: ok\n\ndata: 0123456789"), [{ event: null, data: "ok" }]);
  assert.throws(() => after.push("more"), SseEventTooLarge);
  assert.throws(() => after.end(), SseEventTooLarge);
  const fine = new SseParser(10);
  assert.deepEqual(
    [...fine.push("data: 12345\n\ndata: 12345\n\n"), ...fine.end()],
    [
      { event: null, data: "12345" },
      { event: null, data: "12345" },
    ],
  );
});
