import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { instructionFolders, loadInstructions, MAX_INSTRUCTION_CHARS, projectBounds, repositoryRoot } from "./project-instructions.js";
import { currentBranch, gatherFacts } from "./environment-facts.js";
import { systemPrompt } from "./system-prompt.js";

function temp(t: { after(fn: () => void): void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "rx-instr-")));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("folders run from the repository root down to the workspace; outside a repository only the workspace", async (t) => {
  const dir = temp(t);
  const deep = join(dir, "r", "a", "b");
  mkdirSync(deep, { recursive: true });
  assert.deepEqual(await instructionFolders(deep), [deep]);
  mkdirSync(join(dir, "r", ".git"));
  assert.deepEqual(await instructionFolders(deep), [join(dir, "r"), join(dir, "r", "a"), deep]);
});

test("callers in the same moment share one walk to the repository root; a call after it settles looks again", async (t) => {
  const dir = temp(t);
  const ws = join(dir, "ws");
  mkdirSync(ws);
  const first = repositoryRoot(ws);
  assert.equal(repositoryRoot(ws), first);
  assert.equal(await first, undefined);
  mkdirSync(join(dir, ".git"));
  const again = repositoryRoot(ws);
  assert.notEqual(again, first);
  assert.equal(await again, dir);
  const bounds = projectBounds(ws, []);
  assert.equal(projectBounds(ws, []), bounds);
  assert.notEqual(projectBounds(ws, [dir]), bounds);
  assert.deepEqual(await bounds, [dir, ws]);
});

test("AGENTS.md before REASONIX.md in each folder, the config folder first, empty files skipped, long ones clipped", async (t) => {
  const dir = temp(t);
  const config = join(dir, "config");
  const ws = join(dir, "ws");
  mkdirSync(config);
  mkdirSync(ws);
  writeFileSync(join(config, "REASONIX.md"), "mine");
  writeFileSync(join(ws, "REASONIX.md"), "x".repeat(MAX_INSTRUCTION_CHARS + 10));
  writeFileSync(join(ws, "AGENTS.md"), "\uFEFFshared\n\n");
  mkdirSync(join(dir, "AGENTS.md"));
  writeFileSync(join(config, "AGENTS.md"), "  \n");
  const { files } = await loadInstructions(ws, config);
  assert.deepEqual(
    files.map((f) => [f.path, f.text.length, f.clipped]),
    [
      [join(config, "REASONIX.md"), 4, false],
      [join(ws, "AGENTS.md"), 6, false],
      [join(ws, "REASONIX.md"), MAX_INSTRUCTION_CHARS, true],
    ],
  );
});

test("the branch comes from HEAD, also through a worktree's .git file; the prompt names it", async (t) => {
  const dir = temp(t);
  const gitdir = join(dir, "main.git", "worktrees", "w");
  mkdirSync(gitdir, { recursive: true });
  writeFileSync(join(gitdir, "HEAD"), "ref: refs/heads/feature/x\n");
  const wt = join(dir, "wt");
  mkdirSync(wt);
  writeFileSync(join(wt, ".git"), `gitdir: ${gitdir}\n`);
  // git's back-link in the main checkout names this worktree's .git file.
  writeFileSync(join(gitdir, "gitdir"), `${join(wt, ".git")}\n`);
  assert.deepEqual(await currentBranch(wt, [wt]), { branch: "feature/x", skipped: [] });
  writeFileSync(join(gitdir, "HEAD"), "0123456789abcdef0123456789abcdef01234567\n");
  assert.deepEqual(await currentBranch(wt, [wt]), { branch: "(detached at 0123456789ab)", skipped: [] });
  const { facts } = await gatherFacts(wt, [], { SHELL: "/bin/zsh" }, new Date("2026-03-04T05:06:07Z"));
  const prompt = systemPrompt(facts, []);
  assert.match(prompt, /Session started on: 2026-03-04/);
  assert.match(prompt, /The user's shell: \/bin\/zsh/);
  assert.match(prompt, /Git repository: yes, at .*wt, on branch \(detached at 0123456789ab\)/);
  assert.ok(!prompt.includes("# Project instructions"), "no heading without files");
  assert.equal(systemPrompt(facts, []), prompt, "the same facts give the same bytes");
});

test("git metadata that leads outside is not read: a gitdir pointer with no back-link, a .git or HEAD that is a link out", async (t) => {
  const dir = temp(t);
  const elsewhere = join(dir, "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(join(elsewhere, "HEAD"), "ref: refs/heads/someone-elses\n");
  const wt = join(dir, "wt");
  mkdirSync(wt);
  // A pointer anywhere: no back-link there names this checkout, so it is not this checkout's.
  writeFileSync(join(wt, ".git"), `gitdir: ${elsewhere}\n`);
  assert.deepEqual(await currentBranch(wt, [wt]), {
    branch: undefined,
    skipped: [`Skipped .git: it links outside the repository and the session's folders (to ${elsewhere}).`],
  });
  // The same pointer is fine when the folder it names is one of the session's.
  assert.deepEqual(await currentBranch(wt, [wt, elsewhere]), { branch: "someone-elses", skipped: [] });
  rmSync(join(wt, ".git"));
  symlinkSync(elsewhere, join(wt, ".git"));
  assert.deepEqual((await currentBranch(wt, [wt])).skipped, [`Skipped .git: it links outside the repository and the session's folders (to ${elsewhere}).`]);
  rmSync(join(wt, ".git"));
  mkdirSync(join(wt, ".git"));
  symlinkSync(join(elsewhere, "HEAD"), join(wt, ".git", "HEAD"));
  const { facts, skipped } = await gatherFacts(wt, [], {});
  assert.deepEqual(facts.git, { root: wt, branch: undefined });
  assert.deepEqual(skipped, [`Skipped .git/HEAD: it links outside the repository and the session's folders (to ${join(elsewhere, "HEAD")}).`]);
});

test("instruction files are read only where they really lie: inside the repository and session folders, the user's inside the config folder", async (t) => {
  const dir = temp(t);
  const repo = join(dir, "repo");
  const ws = join(repo, "pkg");
  const extra = join(dir, "extra");
  const config = join(dir, "config");
  const outside = join(dir, "outside");
  for (const d of [join(repo, ".git"), join(repo, "docs"), ws, extra, config, outside]) mkdirSync(d, { recursive: true });
  writeFileSync(join(outside, "secret.md"), "OUTSIDE-MARKER\n");
  writeFileSync(join(repo, "docs", "rules.md"), "Rules from docs.\n");
  writeFileSync(join(extra, "more.md"), "Rules from an additional folder.\n");
  symlinkSync("/proc/self/environ", join(repo, "AGENTS.md"));
  symlinkSync(join(outside, "secret.md"), join(repo, "REASONIX.md"));
  symlinkSync("../docs/rules.md", join(ws, "AGENTS.md"));
  symlinkSync(join(extra, "more.md"), join(ws, "REASONIX.md"));
  // The user's own file may not lead into the repository either, nor the repository's into the config folder.
  writeFileSync(join(config, "mine.md"), "User rule.\n");
  symlinkSync(join(config, "mine.md"), join(config, "AGENTS.md"));
  symlinkSync(join(ws, "AGENTS.md"), join(config, "REASONIX.md"));

  const { files, skipped } = await loadInstructions(ws, config, [extra]);
  assert.deepEqual(
    files.map((f) => [f.path, f.text]),
    [
      [join(config, "AGENTS.md"), "User rule."],
      [join(ws, "AGENTS.md"), "Rules from docs."],
      [join(ws, "REASONIX.md"), "Rules from an additional folder."],
    ],
  );
  assert.equal(skipped.length, 3);
  assert.match(
    skipped[0]!,
    new RegExp(`^Skipped ${join(config, "REASONIX.md")}: it links outside the config folder \\(to ${join(repo, "docs", "rules.md")}\\)\\.$`),
  );
  assert.match(
    skipped[1]!,
    new RegExp(`^Skipped ${join(repo, "AGENTS.md")}: it links outside the repository and the session's folders \\(to /proc/\\d+/environ\\)\\.$`),
  );
  assert.equal(
    skipped[2],
    `Skipped ${join(repo, "REASONIX.md")}: it links outside the repository and the session's folders (to ${join(outside, "secret.md")}).`,
  );
  // Without the additional folder, its file is outside too.
  assert.deepEqual(
    (await loadInstructions(ws, config)).files.map((f) => f.path),
    [join(config, "AGENTS.md"), join(ws, "AGENTS.md")],
  );
});

test("a workspace's AGENTS.md that is a symlink to /dev/zero, or huge, costs a bounded read", async (t) => {
  const dir = temp(t);
  const ws = join(dir, "ws");
  mkdirSync(ws);
  // A repository may carry a symlink anywhere; a device is not an instruction file.
  symlinkSync("/dev/zero", join(ws, "AGENTS.md"));
  writeFileSync(join(ws, "REASONIX.md"), "y".repeat(MAX_INSTRUCTION_CHARS * 8));
  const { files } = await loadInstructions(ws, join(dir, "no-config"));
  assert.deepEqual(
    files.map((f) => [f.path, f.text.length, f.clipped]),
    [[join(ws, "REASONIX.md"), MAX_INSTRUCTION_CHARS, true]],
  );
});
