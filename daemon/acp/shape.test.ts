import { test } from "node:test";
import assert from "node:assert/strict";
import { checkShape, MAX_META_BYTES } from "./shape.js";

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

test("ordinary params pass; deep nesting anywhere is refused with -32602 naming where", () => {
  checkShape({ sessionId: "s", prompt: [{ type: "text", text: "hi", _meta: { "reasonix.io": { a: [1, 2, { b: 3 }] } } }] });
  checkShape({ x: nested(60) });
  for (const params of [{ prompt: [{ type: "text", text: "x", _meta: nested(100_000) }] }, { cwd: "/", mcpServers: [nested(70)] }]) {
    assert.throws(
      () => checkShape(params),
      (e: { code: number; message: string }) => e.code === -32602 && /nested deeper than 64 levels/.test(e.message),
    );
  }
  assert.throws(() => checkShape({ prompt: [{ _meta: nested(100_000) }] }), /prompt\[0\]\._meta/);
});

test("a _meta object over the size limit is refused; large text elsewhere is not", () => {
  checkShape({ prompt: [{ type: "text", text: "y".repeat(4 * MAX_META_BYTES) }] });
  assert.throws(
    () => checkShape({ prompt: [{ type: "text", text: "x", _meta: { blob: "z".repeat(MAX_META_BYTES) } }] }),
    (e: { code: number; message: string }) => e.code === -32602 && /prompt\[0\]\._meta: \d+ bytes exceeds/.test(e.message),
  );
});

test("a huge member name is quoted clipped in the error, not whole", () => {
  const key = "k".repeat(1024 * 1024);
  assert.throws(
    () => checkShape({ [key]: nested(100) }),
    (err: Error & { code?: number }) => err.code === -32602 && err.message.length < 1000 && /k… \(1048576 characters\)/.test(err.message),
  );
});
