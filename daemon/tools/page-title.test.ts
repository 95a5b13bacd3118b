import { test } from "node:test";
import assert from "node:assert/strict";
import { MAX_TITLE_CHARS, titleOf } from "./page-title.js";

test("titleOf: the first <title>'s text, whitespace folded, in any case, with attributes", () => {
  assert.equal(titleOf("<html><head><title>Widget docs</title></head></html>"), "Widget docs");
  assert.equal(titleOf('<TITLE lang="en">\n  A   long\ttitle \n</Title><title>second</title>'), "A long title");
  assert.equal(titleOf("<title></title>"), undefined);
  assert.equal(titleOf("<title>   </title>"), undefined);
  assert.equal(titleOf("<p>no title here</p>"), undefined);
  assert.equal(titleOf("<title>never closed"), undefined);
  assert.equal(titleOf("<title never closed"), undefined);
  // As the old pattern read it: the first tag's ">" opens the title, whatever follows.
  assert.equal(titleOf("<title<title>x</title>"), "x");
  assert.equal(titleOf(`<title>${"word ".repeat(200)}</title>`)!.length, MAX_TITLE_CHARS);
});

test("titleOf over 300 KB of `<title` repeated, and over 1 MB of `<title>` with no end, completes with the pattern's answer", { timeout: 5000 }, () => {
  // The old pattern backtracked over the rest of the page from every `<title`: over 30 s for this one.
  assert.equal(titleOf("<title".repeat(50_000)), undefined);
  assert.equal(titleOf("<title>".repeat(150_000)), undefined);
  assert.equal(titleOf(`${"<title".repeat(50_000)}>Found</title>`), "Found");
});
