import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isInside, resolveReal } from "./workspace.js";

test("dot-dot, absolute paths and symlinks leading out count as outside", (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-ws-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const proj = join(base, "proj");
  const outside = join(base, "outside");
  mkdirSync(proj);
  mkdirSync(outside);
  symlinkSync(outside, join(proj, "link"));
  const roots = [proj];
  assert.equal(isInside(resolveReal(proj, "src/new.ts"), roots), true);
  assert.equal(isInside(resolveReal(proj, "../outside/x"), roots), false);
  assert.equal(isInside(resolveReal(proj, join(outside, "x")), roots), false);
  assert.equal(isInside(resolveReal(proj, "link/x"), roots), false);
  assert.equal(isInside(resolveReal(proj, "link/deeper/new/file"), roots), false);
  assert.equal(isInside(proj, roots), true);
  assert.equal(isInside(`${proj}-sibling/a`, roots), false);
});
