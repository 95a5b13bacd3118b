import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive } from "../../test/support/harness.js";
import { MAX_HOOK_OUTPUT_BYTES, runHookProcess } from "./process.js";

function spawnOpts(t: { after(fn: () => void): void }, extra: { timeoutMs?: number; signal?: AbortSignal; input?: string } = {}) {
  const cwd = mkdtempSync(join(tmpdir(), "rx-hook-"));
  t.after(() => rmSync(cwd, { recursive: true, force: true }));
  return {
    cwd,
    env: { PATH: process.env.PATH, HOOK_WORD: "from-the-session" },
    umask: 0o022,
    input: extra.input ?? '{"hook_event_name":"PreToolUse"}',
    timeoutMs: extra.timeoutMs ?? 10_000,
    signal: extra.signal ?? new AbortController().signal,
  };
}

test("a hook reads the event on stdin, runs in the session's folder with its environment, and its exit code and streams come back", async (t) => {
  const opts = spawnOpts(t);
  const run = await runHookProcess('cat > event.json; echo "$HOOK_WORD"; pwd; echo warned >&2; exit 3', opts);
  assert.equal(run.exitCode, 3);
  assert.equal(run.stdout, `from-the-session\n${opts.cwd}\n`);
  assert.equal(run.stderr, "warned\n");
  assert.equal(readFileSync(join(opts.cwd, "event.json"), "utf8"), opts.input);
  assert.equal(run.timedOut, false);
});

test("a hook that never reads its stdin still finishes (a closed pipe is no error)", async (t) => {
  const run = await runHookProcess("exit 0", spawnOpts(t, { input: "x".repeat(1024 * 1024) }));
  assert.equal(run.exitCode, 0);
  assert.equal(run.spawnError, undefined);
});

test(`each stream is kept up to ${MAX_HOOK_OUTPUT_BYTES / 1024} KiB, and the cut says how much`, async (t) => {
  const run = await runHookProcess("head -c 200000 /dev/zero | tr '\\0' a", spawnOpts(t));
  assert.equal(run.exitCode, 0);
  assert.ok(run.stdout.startsWith("a".repeat(MAX_HOOK_OUTPUT_BYTES)));
  assert.match(run.stdout, new RegExp(`\\[… ${200000 - MAX_HOOK_OUTPUT_BYTES} more bytes cut: a hook's output is kept up to 64 KiB\\]$`));
});

test("at its bound the hook's whole group is killed, a child it left the pipes with included", async (t) => {
  const opts = spawnOpts(t, { timeoutMs: 300 });
  const started = Date.now();
  const run = await runHookProcess("(sleep 20; echo late) & echo $! > child.pid; sleep 20", opts);
  assert.equal(run.timedOut, true);
  assert.equal(run.exitCode, null);
  // A fault bound, not a speed claim: the 20 s sleeps did not hold the hook up.
  assert.ok(Date.now() - started < 10_000);
  const child = Number(readFileSync(join(opts.cwd, "child.pid"), "utf8"));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(isAlive(child), false, "the background child is gone too");
});

test("a cancel stops the hook as its bound would", async (t) => {
  const controller = new AbortController();
  const pending = runHookProcess("sleep 20", spawnOpts(t, { signal: controller.signal }));
  setTimeout(() => controller.abort(), 100);
  const run = await pending;
  assert.equal(run.cancelled, true);
  assert.equal(run.exitCode, null);
});
