import { test } from "node:test";
import assert from "node:assert/strict";
import { FormSurface } from "./manifest.js";
import { formAsPermission, surfaceText } from "./surface-text.js";

test("cards and statuses fall back to Markdown", () => {
  assert.equal(
    surfaceText({
      type: "card",
      title: "Release v2",
      body: "  Notes **here**\n",
      fields: [
        { label: "Version", value: "v2" },
        { label: "Date", value: "today" },
      ],
    }),
    "**Release v2**\n\nNotes **here**\n\n- Version: v2\n- Date: today",
  );
  assert.equal(surfaceText({ type: "card", title: "Bare" }), "**Bare**");
  assert.equal(surfaceText({ type: "status", title: "Deploy", state: "ok", text: "All healthy" }), "**Deploy** — ✅ ok\n\nAll healthy");
  assert.equal(surfaceText({ type: "status", title: "Deploy", state: "warning" }), "**Deploy** — ⚠️ warning");
  assert.equal(surfaceText({ type: "status", title: "Deploy", state: "error", text: "boom" }), "**Deploy** — ❌ error\n\nboom");
  assert.equal(surfaceText({ type: "status", title: "Deploy", state: "info" }), "**Deploy** — ℹ️ info");
  const form = FormSurface.parse({
    type: "form",
    title: "Go?",
    fields: [
      { name: "t", label: "Target", choices: ["a", "b"] },
      { name: "n", default: "x" },
    ],
  });
  assert.equal(surfaceText(form), "**Go?**\n\n- Target: a | b\n- n: x");
});

const form = (fields: unknown[]) => FormSurface.parse({ type: "form", title: "Deploy api?", fields });

test("a single choice field is one option per choice plus Cancel", () => {
  const p = formAsPermission(
    form([
      { name: "target", label: "Target", choices: ["staging", "production"] },
      { name: "note", default: "ok" },
    ]),
  );
  assert.equal(p.title, "Deploy api?");
  assert.deepEqual(p.options, [
    { optionId: "answer-0", name: "staging", kind: "allow_once" },
    { optionId: "answer-1", name: "production", kind: "allow_once" },
    { optionId: "cancel", name: "Cancel", kind: "reject_once" },
  ]);
  assert.deepEqual(p.answer("answer-1"), { target: "production", note: "ok" });
  assert.equal(p.answer("cancel"), undefined);
  assert.equal(p.answer("bogus"), undefined);
});

test("several fields become the cartesian product while it has at most 8 entries", () => {
  const p = formAsPermission(
    form([{ name: "target", label: "Target", choices: ["staging", "production"] }, { name: "region", choices: ["eu", "us"] }, { name: "free" }]),
  );
  assert.deepEqual(
    p.options.map((o) => o.name),
    ["Target: staging, region: eu", "Target: staging, region: us", "Target: production, region: eu", "Target: production, region: us", "Cancel"],
  );
  const id = p.options.find((o) => o.name === "Target: production, region: eu")!.optionId;
  assert.deepEqual(p.answer(id), { target: "production", region: "eu", free: "" });
});

test("a product of more than 8 entries offers only the defaults", () => {
  const p = formAsPermission(
    form([
      { name: "a", choices: ["1", "2", "3"] },
      { name: "b", choices: ["x", "y", "z"], default: "y" },
      { name: "c", default: "text" },
    ]),
  );
  assert.deepEqual(p.options, [
    { optionId: "defaults", name: "Submit defaults", kind: "allow_once" },
    { optionId: "cancel", name: "Cancel", kind: "reject_once" },
  ]);
  assert.deepEqual(p.answer("defaults"), { a: "1", b: "y", c: "text" });
});

test("a form without choices is a plain Submit / Cancel confirmation", () => {
  const p = formAsPermission(form([]));
  assert.deepEqual(
    p.options.map((o) => [o.name, o.kind]),
    [
      ["Submit", "allow_once"],
      ["Cancel", "reject_once"],
    ],
  );
  assert.deepEqual(p.answer("answer-0"), {});
  const answer = p.answer("answer-0")!;
  answer.injected = "x";
  assert.deepEqual(p.answer("answer-0"), {}, "answers are copies");
});
