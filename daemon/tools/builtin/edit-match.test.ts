import { test } from "node:test";
import assert from "node:assert/strict";
import { applyEdit } from "./edit-match.js";

const SRC = "class A {\n    run() {\n        go(1,  2);\n        stop();\n    }\n}\n";

test("an exact match replaces once; replaceAll replaces every one", () => {
  assert.deepEqual(applyEdit("a b a", { oldText: "b", newText: "c" }, false), { text: "a c a" });
  assert.deepEqual(applyEdit("a b a", { oldText: "a", newText: "x", replaceAll: true }, false), { text: "x b x" });
});

test("whole lines that differ only in whitespace match, and newText moves to the file's indentation", () => {
  const r = applyEdit(SRC, { oldText: "  go(1, 2);\n  stop();\n", newText: "  go(3, 4);\n  if (x) {\n    stop();\n  }\n" }, false);
  assert.ok("text" in r);
  assert.equal(r.text, "class A {\n    run() {\n        go(3, 4);\n        if (x) {\n          stop();\n        }\n    }\n}\n");
  assert.match(r.note ?? "", /matched only when whitespace was ignored \(line 3\); newText was re-indented/);
});

test("a tolerant match keeps CRLF line endings and a missing final newline", () => {
  const crlf = "a\r\n  b  \r\nc";
  const r = applyEdit(crlf, { oldText: "b\nc", newText: "B\nC" }, true);
  assert.ok("text" in r);
  assert.equal(r.text, "a\r\n  B\r\n  C");
  const last = applyEdit("x\n\tlast", { oldText: "last", newText: "final" }, false);
  assert.deepEqual(last, { text: "x\n\tfinal" }, "a substring is an exact match");
});

test("diagnosis: not unique (with the count and lines), not unique ignoring whitespace, nearest candidate, nothing alike", () => {
  const twice = "f();\nx\nf();\n";
  assert.match((applyEdit(twice, { oldText: "f();", newText: "g();" }, false) as { error: string }).error, /not unique: 2 matches \(lines 1, 3\)/);
  assert.match(
    (applyEdit("  f();\nx\n    f();\n", { oldText: "\tf();", newText: "g();" }, false) as { error: string }).error,
    /not unique: it matches 2 places when whitespace is ignored \(lines 1, 3\)/,
  );
  const near = applyEdit(SRC, { oldText: "go(1, 3);\nstop();", newText: "x" }, false) as { error: string };
  assert.match(near.error, /not found, not even ignoring whitespace; the nearest candidate is at line 3:\n {4}3\t {8}go\(1, {2}2\);\n {4}4\t {8}stop\(\);/);
  assert.match((applyEdit(SRC, { oldText: "zebra quantum", newText: "x" }, false) as { error: string }).error, /nothing in the file resembles it/);
  assert.match((applyEdit(SRC, { oldText: "", newText: "x" }, false) as { error: string }).error, /oldText is empty/);
});

test("a fragment of a line whose spacing differs matches, with a note; twice is not unique", () => {
  const r = applyEdit("let total = a +  b;\nnext();\n", { oldText: "a + b", newText: "a - b" }, false);
  assert.deepEqual(r, { text: "let total = a - b;\nnext();\n", note: "oldText matched only when spacing was ignored (line 1)" });
  const twice = applyEdit("x  = 1; y = 2;\nx =  1;\n", { oldText: "x = 1", newText: "x = 3" }, false);
  assert.match((twice as { error: string }).error, /matches 2 places when spacing is ignored \(lines 1, 2\)/);
});

test("fragment matches map back through runs of tabs and spaces, at any place in the line", () => {
  const r = applyEdit("x\t =\t\t1;  y  =\t2;\ty =  2", { oldText: "y = 2", newText: "Y", replaceAll: true }, false);
  assert.deepEqual(r, { text: "x\t =\t\t1;  Y;\tY", note: "oldText matched only when spacing was ignored (line 1, 1)" });
  assert.deepEqual(applyEdit("ab  c", { oldText: "b c", newText: "B C" }, false), {
    text: "aB C",
    note: "oldText matched only when spacing was ignored (line 1)",
  });
});

test("adversarial edits complete with the right answer: long needles, many matches, a result past the bound", { timeout: 30_000 }, () => {
  // Sizes where each old quadratic path below would take minutes, and the linear ones take 0.1–0.6 s.
  // Words joined by [ \t]+ retried the needle from every word of the file: 6 s for a tenth of this,
  // and a regex stack overflow for 100 000 words.
  const fragment = applyEdit("a ".repeat(500_000), { oldText: `${"a ".repeat(100_000)}b`, newText: "x" }, false);
  assert.match((fragment as { error: string }).error, /^oldText not found, not even ignoring whitespace; the nearest candidate is at line 1:/);
  const words = Array.from({ length: 100_000 }, (_, i) => `w${i}`);
  assert.deepEqual(applyEdit(`start ${words.join("  ")} end`, { oldText: words.join(" "), newText: "W" }, false), {
    text: "start W end",
    note: "oldText matched only when spacing was ignored (line 1)",
  });
  // Whole lines compared window by window: a million lines against 200 000 was 2·10¹¹ comparisons.
  const lines = applyEdit("a\n".repeat(500_000), { oldText: `${"a\n".repeat(100_000)}b`, newText: "x" }, false);
  assert.match((lines as { error: string }).error, /^oldText not found, not even ignoring whitespace; the nearest candidate is at line 1:/);
  // Each replacement used to copy the whole text: 20 s for a tenth of these.
  const tolerant = applyEdit(" a  b\n".repeat(250_000), { oldText: "a b\n", newText: "x\n", replaceAll: true }, false);
  assert.equal((tolerant as { text: string }).text, " x\n".repeat(250_000));
  const spaced = applyEdit("a  b;".repeat(250_000), { oldText: "a b", newText: "x", replaceAll: true }, false);
  assert.equal((spaced as { text: string }).text, "x;".repeat(250_000));
  const huge = applyEdit("ab".repeat(500_000), { oldText: "b", newText: "x".repeat(1000), replaceAll: true }, false);
  assert.match((huge as { error: string }).error, /^the edit would make the file longer than the 16777216 characters an edit may produce/);
});
