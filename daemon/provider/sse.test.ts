import assert from "node:assert/strict";
import { test } from "node:test";
import { SseParser } from "./sse.js";

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
