import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isInside, mayExistBelow, resolveReal } from "./workspace.js";

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

test("mayExistBelow: false only for a name certainly absent; a link on the way is not followed but left to the caller", (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-ws-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const elsewhere = join(base, "elsewhere");
  mkdirSync(elsewhere);
  const proj = join(base, "proj");
  mkdirSync(join(proj, ".reasonix", "skills"), { recursive: true });
  writeFileSync(join(proj, "AGENTS.md"), "# rules\n");
  assert.equal(mayExistBelow(proj, join(proj, "CLAUDE.md")), false, "an absent file");
  assert.equal(mayExistBelow(proj, join(proj, ".claude", "skills")), false, "an absent folder on the way");
  assert.equal(mayExistBelow(proj, join(proj, "AGENTS.md")), true);
  assert.equal(mayExistBelow(proj, join(proj, ".reasonix", "skills")), true);
  // The link leads to a folder without `skills`: had it been followed, the answer would be false.
  symlinkSync(elsewhere, join(proj, ".agents"));
  assert.equal(mayExistBelow(proj, join(proj, ".agents", "skills")), true, "a link: the pool's real-path check decides");
  symlinkSync(join(base, "nowhere"), join(proj, "REASONIX.md"));
  assert.equal(mayExistBelow(proj, join(proj, "REASONIX.md")), true, "a dangling link too");
  writeFileSync(join(proj, ".cursor"), "a file where a folder would be\n");
  assert.equal(mayExistBelow(proj, join(proj, ".cursor", "skills")), true, "a file on the way: the caller finds out");
  assert.equal(mayExistBelow(proj, join(elsewhere, "x")), true, "not below base: not judged here");
});
