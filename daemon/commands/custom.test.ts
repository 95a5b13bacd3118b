import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CommandDir, expandTemplate, loadCustomCommands, MAX_COMMAND_BYTES, parseFrontMatter, parseSlash, splitArgs } from "./custom.js";

/** A command folder whose files may lie anywhere under `bound`. */
const inside = (dir: string, bound = dir): CommandDir => ({ dir, base: dirname(dir), inside: [bound], boundary: "the test's folder" });

test("commands come from nested markdown files; the project folder overrides the user folder", async (t) => {
  const base = mkdtempSync(join(tmpdir(), "rx-cmd-"));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const user = join(base, "user");
  const project = join(base, "project");
  mkdirSync(join(user, "git"), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(join(user, "git", "commit.md"), '---\ndescription: "Commit staged work"\nargument-hint: <message>\n---\nCommit with message: $ARGUMENTS\n');
  writeFileSync(join(user, "review.md"), "Review the code\n");
  writeFileSync(join(project, "review.md"), "---\ndescription: Project review\n---\nReview $1 carefully\n");
  writeFileSync(join(project, "bad name.md"), "ignored\n");
  writeFileSync(join(project, "notes.txt"), "ignored\n");
  const { commands: cmds, skipped } = await loadCustomCommands([inside(user), inside(project), inside(join(base, "missing"), base)]);
  assert.deepEqual(skipped, []);
  assert.deepEqual(
    cmds.map((c) => [c.name, c.description, c.hint]),
    [
      ["git:commit", "Commit staged work", "<message>"],
      ["review", "Project review", undefined],
    ],
  );
});

test("templates expand $ARGUMENTS, positional arguments and $$", () => {
  assert.equal(expandTemplate("Fix $1 in $2 ($ARGUMENTS) for $$5", 'bug "src/a b.ts"'), 'Fix bug in src/a b.ts (bug "src/a b.ts") for $5');
  assert.equal(expandTemplate("Just do it", "extra words"), "Just do it\n\nextra words");
  assert.equal(expandTemplate("Missing $3", "a"), "Missing ");
  assert.deepEqual(splitArgs(`one 'two three' "four \\"five\\""`), ["one", "two three", 'four "five"']);
});

test("slash parsing and front-matter edge cases", () => {
  assert.deepEqual(parseSlash("/git:commit  fix the bug\nmore"), { name: "git:commit", args: "fix the bug\nmore" });
  assert.deepEqual(parseSlash("/help"), { name: "help", args: "" });
  assert.equal(parseSlash("not a command"), undefined);
  assert.equal(parseSlash("/ spaced"), undefined);
  assert.deepEqual(parseFrontMatter("no front matter"), { meta: {}, body: "no front matter" });
});

test("front matter from a file of 200 KB of blanks in one line parses in one pass", { timeout: 10_000 }, () => {
  // /^(key)\s*:\s*(.*)$/ tried every split of the blanks between \s* and .*: about a minute for this line.
  const text = `---\nargument-hint: ${" ".repeat(200_000)}\u2028x\u2028\nDescription : a: b\n 1bad: no\n---\nbody`;
  assert.deepEqual(parseFrontMatter(text), { meta: { "argument-hint": "x", description: "a: b" }, body: "body" });
});

test("a command file past MAX_COMMAND_BYTES is left out; a symlink to a device is not read", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-cmd-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "ok.md"), "fine\n");
  writeFileSync(join(dir, "huge.md"), "z".repeat(MAX_COMMAND_BYTES + 1));
  symlinkSync("/dev/zero", join(dir, "zero.md"));
  const { commands: cmds } = await loadCustomCommands([inside(dir, "/")]);
  assert.deepEqual(
    cmds.map((c) => c.name),
    ["ok"],
  );
});

test("a command folder that links outside gives nothing; a file linking out is skipped, one linking inside works", async (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-cmd-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const project = join(base, "project");
  const outside = join(base, "outside");
  mkdirSync(join(project, "docs"), { recursive: true });
  mkdirSync(join(project, "commands"));
  mkdirSync(outside);
  writeFileSync(join(outside, "leak.md"), "OUTSIDE\n");
  writeFileSync(join(project, "docs", "shared.md"), "---\ndescription: Shared\n---\nShared body\n");
  writeFileSync(join(project, "commands", "plain.md"), "Plain\n");
  symlinkSync(join(outside, "leak.md"), join(project, "commands", "leak.md"));
  symlinkSync("../docs/shared.md", join(project, "commands", "shared.md"));
  symlinkSync("/proc/self/environ", join(project, "commands", "env.md"));
  symlinkSync(outside, join(project, "linked"));

  const { commands, skipped } = await loadCustomCommands([inside(join(project, "commands"), project), inside(join(project, "linked"), project)]);
  assert.deepEqual(
    commands.map((c) => [c.name, c.body]),
    [
      ["plain", "Plain"],
      ["shared", "Shared body"],
    ],
  );
  assert.equal(skipped.length, 3);
  assert.match(skipped[0]!, /^Skipped .*\/commands\/env\.md: it links outside the test's folder \(to \/proc\/\d+\/environ\)\.$/);
  assert.equal(skipped[1], `Skipped ${join(project, "commands", "leak.md")}: it links outside the test's folder (to ${join(outside, "leak.md")}).`);
  assert.equal(skipped[2], `Skipped ${join(project, "linked")}: it links outside the test's folder (to ${outside}).`);
});

test("front matter: a block scalar is folded (>) or kept line by line (|); a nested map's lines are left out", () => {
  const text =
    "---\nname: release-notes\ndescription: >\n  Write the release notes\n  for a new version.\nmetadata:\n  author: someone\nusage: |\n  one\n  two\n---\nbody";
  assert.deepEqual(parseFrontMatter(text), {
    meta: { name: "release-notes", description: "Write the release notes for a new version.", metadata: "", usage: "one\ntwo" },
    body: "body",
  });
});
