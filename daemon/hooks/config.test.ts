import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hookPlace, loadHookConfig, matches, projectHash } from "./config.js";

function folders(t: { after(fn: () => void): void }) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-hookcfg-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const config = join(base, "config");
  const repo = join(base, "repo");
  mkdirSync(config);
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(join(repo, ".claude"));
  mkdirSync(join(repo, ".reasonix"));
  mkdirSync(join(repo, "pkg"));
  return { base, config, repo };
}

const settings = (event: string, command: string, matcher?: string, timeout?: number) =>
  JSON.stringify({ permissions: { allow: [] }, hooks: { [event]: [{ matcher, hooks: [{ type: "command", command, timeout }] }] } });

test("the user's hooks come first, then the project's from the repository root (.reasonix, then .claude); other keys are left alone", async (t) => {
  const { config, repo } = folders(t);
  writeFileSync(join(config, "settings.json"), settings("Stop", "echo user"));
  writeFileSync(join(repo, ".reasonix", "settings.json"), settings("PreToolUse", "echo reasonix", "Bash", 5));
  writeFileSync(join(repo, ".claude", "settings.json"), settings("PostToolUse", "echo claude", "Write|Edit"));
  const loaded = await loadHookConfig(config, await hookPlace(join(repo, "pkg"), []));
  assert.deepEqual(
    loaded.hooks.map((h) => [h.event, h.command, h.project, h.timeoutMs]),
    [
      ["Stop", "echo user", false, 60_000],
      ["PreToolUse", "echo reasonix", true, 5_000],
      ["PostToolUse", "echo claude", true, 60_000],
    ],
  );
  assert.equal(loaded.repository, repo);
  assert.deepEqual(loaded.problems, []);
  const before = projectHash(loaded);
  writeFileSync(join(repo, ".claude", "settings.json"), settings("PostToolUse", "echo claude ", "Write|Edit"));
  assert.notEqual(projectHash(await loadHookConfig(config, await hookPlace(join(repo, "pkg"), []))), before, "a changed byte is another hash");
});

test("a project file that links outside the repository is not read; a malformed one is named; unknown events and hook types are left out", async (t) => {
  const { base, config, repo } = folders(t);
  writeFileSync(join(base, "elsewhere.json"), settings("Stop", "echo outside"));
  symlinkSync(join(base, "elsewhere.json"), join(repo, ".claude", "settings.json"));
  writeFileSync(
    join(repo, ".reasonix", "settings.json"),
    JSON.stringify({ hooks: { Notification: [{ hooks: [{ type: "command", command: "x" }] }], Stop: [{ hooks: [{ type: "prompt", prompt: "p" }] }] } }),
  );
  writeFileSync(join(config, "settings.json"), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "x", timeout: -1 }] }] } }));
  const loaded = await loadHookConfig(config, await hookPlace(repo, []));
  assert.deepEqual(loaded.hooks, []);
  assert.deepEqual(loaded.projectFiles, [], "nothing to trust");
  assert.equal(loaded.problems.length, 3, loaded.problems.join("\n"));
  assert.match(loaded.problems[0]!, /^Ignored .*config\/settings\.json: hooks\.Stop\.0\.hooks\.0\.timeout: /);
  assert.match(loaded.problems[1]!, /^Skipped a Stop hook in \.reasonix\/settings\.json: only \{"type": "command"/);
  assert.match(loaded.problems[2]!, /^Skipped \.claude\/settings\.json: it links outside the repository/);
});

test("a matcher is a regular expression over the whole name, or the name itself; empty and * take every tool", () => {
  assert.ok(matches(undefined, ["run_command", "Bash"]));
  assert.ok(matches("*", ["grep"]));
  assert.ok(matches("", ["grep"]));
  assert.ok(matches("Bash", ["run_command", "Bash"]));
  assert.ok(matches("Edit|Write", ["write_file", "Write"]));
  assert.ok(!matches("Edit", ["multi_edit", "MultiEdit"]), "whole names only");
  assert.ok(matches("mcp__.*", ["mcp__github__search"]));
  assert.ok(matches("a(b", ["a(b"]), "not a regular expression: the name itself");
  assert.ok(!matches("Bash", ["read_file", "Read"]));
});
