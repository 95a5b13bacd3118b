import { test } from "node:test";
import assert from "node:assert/strict";
import { clipForModel } from "./clip.js";

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
