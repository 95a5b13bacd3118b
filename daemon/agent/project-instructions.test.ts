import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { instructionFolders, loadInstructions, MAX_INSTRUCTION_CHARS } from "./project-instructions.js";
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
  const files = await loadInstructions(ws, config);
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
  assert.equal(await currentBranch(wt), "feature/x");
  writeFileSync(join(gitdir, "HEAD"), "0123456789abcdef0123456789abcdef01234567\n");
  assert.equal(await currentBranch(wt), "(detached at 0123456789ab)");
  const facts = await gatherFacts(wt, [], { SHELL: "/bin/zsh" }, new Date("2026-03-04T05:06:07Z"));
  const prompt = systemPrompt(facts, []);
  assert.match(prompt, /Session started on: 2026-03-04/);
  assert.match(prompt, /The user's shell: \/bin\/zsh/);
  assert.match(prompt, /Git repository: yes, at .*wt, on branch \(detached at 0123456789ab\)/);
  assert.ok(!prompt.includes("# Project instructions"), "no heading without files");
  assert.equal(systemPrompt(facts, []), prompt, "the same facts give the same bytes");
});

test("a workspace's AGENTS.md that is a symlink to /dev/zero, or huge, costs a bounded read", async (t) => {
  const dir = temp(t);
  const ws = join(dir, "ws");
  mkdirSync(ws);
  // A repository may carry a symlink anywhere; a device is not an instruction file.
  symlinkSync("/dev/zero", join(ws, "AGENTS.md"));
  writeFileSync(join(ws, "REASONIX.md"), "y".repeat(MAX_INSTRUCTION_CHARS * 8));
  const files = await loadInstructions(ws, join(dir, "no-config"));
  assert.deepEqual(
    files.map((f) => [f.path, f.text.length, f.clipped]),
    [[join(ws, "REASONIX.md"), MAX_INSTRUCTION_CHARS, true]],
  );
});
