import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { probeSandbox } from "./sandbox-probe.js";

/** A bwrap on a folder of its own that logs each run and exits with `code`. */
function fakeBwrap(t: { after(fn: () => void): void }, code: number): { path: string; runs(): number; replace(code: number): void } {
  const dir = mkdtempSync(join(tmpdir(), "rx-probe-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, "runs");
  writeFileSync(log, "");
  const write = (c: number, note: string) => {
    writeFileSync(join(dir, "bwrap"), `#!/bin/sh\n# ${note}\necho run >> ${log}\n${c === 0 ? "" : "echo 'bwrap: no namespaces here' >&2\n"}exit ${c}\n`);
    chmodSync(join(dir, "bwrap"), 0o755);
  };
  write(code, "first");
  return { path: dir, runs: () => readFileSync(log, "utf8").split("\n").filter(Boolean).length, replace: (c) => write(c, "replaced, a longer file") };
}

test("a bwrap that made the namespaces is not run again in this process until the file changes", async (t) => {
  const bwrap = fakeBwrap(t, 0);
  assert.deepEqual(await probeSandbox(bwrap.path, "linux"), { available: true, kind: "bubblewrap", bwrap: join(bwrap.path, "bwrap") });
  assert.equal((await probeSandbox(bwrap.path, "linux")).available, true);
  assert.equal(bwrap.runs(), 1, "one probe for the second daemon's question too");
  bwrap.replace(1);
  const after = await probeSandbox(bwrap.path, "linux");
  assert.equal(bwrap.runs(), 2, "a replaced binary is asked again");
  assert.equal(after.available, false);
  assert.match((after as { reason: string }).reason, /cannot make the sandbox's namespaces here: bwrap: no namespaces here/);
});

test("a no is never kept: each probe of a failing bwrap runs it", async (t) => {
  const bwrap = fakeBwrap(t, 1);
  assert.equal((await probeSandbox(bwrap.path, "linux")).available, false);
  assert.equal((await probeSandbox(bwrap.path, "linux")).available, false);
  assert.equal(bwrap.runs(), 2);
});
