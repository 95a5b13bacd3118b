import { test } from "node:test";
import assert from "node:assert/strict";
import { clipForModel, OUTPUT_TAIL_BYTES, OUTPUT_TAIL_LINES, outputTail } from "./clip.js";

test("text over the bound keeps its head and tail with a note saying how much was left out", () => {
  assert.equal(clipForModel("short", 10, "x"), "short");
  const long = `${"a".repeat(600)}${"b".repeat(400)}`;
  const out = clipForModel(long, 100, "the tool's result", "Ask for less.");
  assert.ok(out.startsWith("a".repeat(75)));
  assert.ok(out.endsWith("b".repeat(25)));
  assert.match(out, /\[\.\.\. 900 characters omitted here: the tool's result is 1000 characters; the first 75 and the last 25 are shown\. Ask for less\.\]/);
  assert.ok(out.length < 300);
});

test("a cut never splits a surrogate pair", () => {
  const text = "😀".repeat(100);
  const out = clipForModel(text, 51, "it");
  assert.equal(out.includes("\ud83d\n") || out.includes("\n\ude00"), false);
  assert.doesNotThrow(() => encodeURIComponent(out));
});

test("a command's output tail: short output as it is, else its last 64 lines within 4 KiB, marked", () => {
  assert.equal(outputTail(""), "(no output)");
  const short = `${Array.from({ length: OUTPUT_TAIL_LINES }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
  assert.equal(outputTail(short), short, "64 lines and a final newline are not cut");
  const long = `${Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n")}\n`;
  const tail = outputTail(long);
  const [marker, ...rest] = tail.split("\n");
  assert.match(marker!, /^\[… \d+ earlier bytes of output not shown; its end follows\]$/);
  assert.equal(rest.join("\n"), `${Array.from({ length: 64 }, (_, i) => `line ${i + 37}`).join("\n")}\n`);
  assert.equal(Number(/\d+/.exec(marker!)![0]) + Buffer.byteLength(rest.join("\n")), Buffer.byteLength(long), "the count is what was left out");
  // One long line: bytes bound it, never cutting a character in two.
  const wide = outputTail(`${"é".repeat(5000)}\nEND`);
  assert.ok(Buffer.byteLength(wide) < OUTPUT_TAIL_BYTES + 100);
  assert.ok(wide.endsWith("é\nEND") && !wide.includes("\ufffd"));
});

test("the output tail is found in linear time, whatever the output", { timeout: 5_000 }, () => {
  const newlines = "\n".repeat(1024 * 1024);
  assert.equal(outputTail(newlines).split("\n").length - 1, 1 + OUTPUT_TAIL_LINES);
  assert.ok(outputTail(`x${" ".repeat(1024 * 1024)}`).length < OUTPUT_TAIL_BYTES + 100);
});
