import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { BoundedOutput, localCommands } from "./local-commands.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "reasonix-cmd-")));
after(() => rmSync(dir, { recursive: true, force: true }));
const runner = localCommands({ ...process.env, REASONIX_TEST_VAR: "from-env" });
const opts = (extra: { timeoutMs?: number; signal?: AbortSignal; umask?: number } = {}) => ({
  cwd: dir,
  timeoutMs: extra.timeoutMs ?? 10_000,
  signal: extra.signal ?? new AbortController().signal,
  umask: extra.umask ?? 0o022,
});

/** A zombie (dead, not yet reaped by init) counts as gone. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function waitDead(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && alive(pid); i++) await sleep(50);
  return !alive(pid);
}

async function backgroundPid(file: string): Promise<number> {
  for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(20);
  return Number(readFileSync(file, "utf8").trim());
}

test("runs in cwd with the given env, stdout and stderr in one output", async () => {
  const r = await runner.run('pwd; echo "$REASONIX_TEST_VAR"; echo oops >&2; exit 3', opts());
  assert.equal(r.exitCode, 3);
  assert.equal(r.output, `${dir}\nfrom-env\noops\n`);
  assert.deepEqual([r.truncated, r.timedOut, r.cancelled, r.signal], [false, false, false, null]);
});

test("keeps the first and last 16 KiB of long output", async () => {
  const r = await runner.run("head -c 100000 /dev/zero | tr '\\0' a; echo; echo THE-END", opts());
  assert.equal(r.truncated, true);
  assert.match(r.output, /^a{16384}\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/);
  assert.ok(r.output.endsWith("a\nTHE-END\n"));
  assert.ok(r.output.length < 33 * 1024);
});

test("BoundedOutput keeps exact bytes when nothing is dropped, counts what is", () => {
  const b = new BoundedOutput(4, 4);
  for (const s of ["ab", "cdef", "gh", "ijkl"]) b.push(Buffer.from(s));
  assert.deepEqual(b.result(), { output: "abcd\n[... 4 bytes omitted ...]\nijkl", truncated: true });
  const small = new BoundedOutput(4, 4);
  small.push(Buffer.from("abcdefgh"));
  assert.deepEqual(small.result(), { output: "abcdefgh", truncated: false });
});

test("a timeout kills the whole process group, background jobs included", async () => {
  const pidFile = join(dir, "timeout.pid");
  const started = Date.now();
  const r = await runner.run(`sleep 100 & echo $! > ${pidFile}; wait`, opts({ timeoutMs: 300 }));
  assert.equal(r.timedOut, true);
  assert.equal(r.cancelled, false);
  // A fault bound, not a speed claim: the 100 s sleep did not hold the run up (generous: loaded CI).
  assert.ok(Date.now() - started < 60_000);
  assert.equal(await waitDead(await backgroundPid(pidFile)), true, "background sleep survived");
});

test("cancelling kills the whole process group", async () => {
  const pidFile = join(dir, "cancel.pid");
  const ac = new AbortController();
  const running = runner.run(`sleep 100 & echo $! > ${pidFile}; wait`, opts({ signal: ac.signal }));
  const pid = await backgroundPid(pidFile);
  ac.abort();
  const r = await running;
  assert.equal(r.cancelled, true);
  assert.equal(r.timedOut, false);
  assert.equal(await waitDead(pid), true, "background sleep survived");
});

test("processes ignoring SIGTERM are killed after the grace period", async () => {
  const pidFile = join(dir, "stubborn.pid");
  const r = await runner.run(`sh -c 'trap "" TERM; echo $$ > ${pidFile}; while :; do sleep 0.1; done' & wait`, opts({ timeoutMs: 300 }));
  assert.equal(r.timedOut, true);
  assert.equal(await waitDead(await backgroundPid(pidFile)), true, "SIGTERM-proof process survived");
});

test("a shell that exits leaves nothing running behind it", async () => {
  const pidFile = join(dir, "orphan.pid");
  const started = Date.now();
  const r = await runner.run(`sleep 100 & echo $! > ${pidFile}; echo done`, opts());
  assert.equal(r.exitCode, 0);
  assert.equal(r.output, "done\n");
  assert.ok(Date.now() - started < 60_000, "waited for the 100 s background job");
  assert.equal(await waitDead(await backgroundPid(pidFile)), true);
});

test("an already aborted signal runs nothing", async () => {
  const ac = new AbortController();
  ac.abort();
  const r = await runner.run(`touch ${join(dir, "never")}`, opts({ signal: ac.signal }));
  assert.equal(r.cancelled, true);
  assert.equal(existsSync(join(dir, "never")), false);
});

test("a missing cwd rejects", async () => {
  await assert.rejects(runner.run("true", { ...opts(), cwd: join(dir, "nope") }));
});

test("a command runs under the session's umask, its own text and $0 as they were", async () => {
  const r = await runner.run('umask; echo "$0" $#; mkdir made && touch made/file && stat -c %a made made/file', opts({ umask: 0o027 }));
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(r.output, "0027\n/bin/sh 0\n750\n640\n");
});
