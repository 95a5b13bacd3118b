import { test } from "node:test";
import assert from "node:assert/strict";
import { ExactId } from "./exact-id.js";
import { LineReader, idFromHead } from "./ndjson.js";

function collect(max?: number) {
  const lines: string[] = [];
  const oversize: Array<{ bytes: number; head: string }> = [];
  const reader = new LineReader({ line: (l) => lines.push(l), oversize: (bytes, head) => oversize.push({ bytes, head }) }, max);
  return { reader, lines, oversize };
}

test("splits lines across chunks, drops CR and blank lines", () => {
  const { reader, lines } = collect();
  reader.push(Buffer.from('{"a":1}\r\n{"b"'));
  reader.push(Buffer.from(":2}\n\n   \n"));
  reader.push(Buffer.from('{"c":3}'));
  reader.end();
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
});

test("keeps multi-byte characters split across chunks whole", () => {
  const { reader, lines } = collect();
  const bytes = Buffer.from('{"t":"héllo ✓"}\n');
  reader.push(bytes.subarray(0, 9));
  reader.push(bytes.subarray(9));
  assert.deepEqual(lines, ['{"t":"héllo ✓"}']);
});

test("an oversize line is reported once, not buffered, and the next line still parses", () => {
  const { reader, lines, oversize } = collect(32);
  reader.push(Buffer.from('{"jsonrpc":"2.0","id":7,"method":"x","params":{"pad":"'));
  reader.push(Buffer.from("y".repeat(100)));
  reader.push(Buffer.from('"}}\n{"ok":true}\n'));
  assert.equal(oversize.length, 1);
  assert.ok(oversize[0]!.bytes > 100);
  assert.equal(idFromHead(oversize[0]!.head), 7);
  assert.deepEqual(lines, ['{"ok":true}']);
});

test("idFromHead finds top-level ids only", () => {
  assert.equal(idFromHead('{"jsonrpc":"2.0","id":"abc","method":"m"'), "abc");
  assert.equal(idFromHead('{"id": -3, "jsonrpc":"2.0"'), -3);
  assert.equal(idFromHead('{"jsonrpc":"2.0","params":{"id":5}'), null);
  assert.equal(idFromHead("not json"), null);
});

test("idFromHead keeps a number JavaScript would round as its JSON text; safe integers stay numbers", () => {
  assert.deepEqual(idFromHead('{"jsonrpc":"2.0","id":18446744073709551617,"method":"m"'), new ExactId("18446744073709551617"));
  assert.deepEqual(idFromHead('{"id":-123456789012345678901234567890,"jsonrpc":"2.0"'), new ExactId("-123456789012345678901234567890"));
  assert.deepEqual(idFromHead('{"id":1e400,"jsonrpc":"2.0"'), new ExactId("1e400"));
  assert.deepEqual(idFromHead('{"id":1.50,"jsonrpc":"2.0"'), new ExactId("1.50"));
  assert.equal(idFromHead('{"id":9007199254740991,"jsonrpc":"2.0"'), 9007199254740991);
  assert.equal(idFromHead('{"id":2.5,"jsonrpc":"2.0"'), 2.5);
});
