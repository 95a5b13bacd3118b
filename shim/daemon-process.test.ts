import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolvePaths } from "../shared/paths.js";
import { startingDaemon } from "./daemon-process.js";

/** A process whose command line is a `reasonix daemon run`'s: a script named reasonix.js that waits. */
function fakeDaemon(dir: string, env: Record<string, string>, cwd = dir): { pid: number; stop: () => void } {
  const script = join(dir, "reasonix.js");
  writeFileSync(script, "setTimeout(() => undefined, 30_000);\n");
  const child = spawn(process.execPath, [script, "daemon", "run"], { env: { PATH: process.env.PATH ?? "", ...env }, cwd, stdio: "ignore" });
  return { pid: child.pid!, stop: () => child.kill("SIGKILL") };
}

test("a `reasonix daemon run` whose environment names this store is a daemon starting; one of another store, or the lost one, is not", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-rejoin-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, "home");
  const other = join(dir, "other");
  const ours = fakeDaemon(dir, { REASONIX_HOME: home });
  const theirs = fakeDaemon(dir, { REASONIX_HOME: other });
  // A home given relative to the daemon's own working folder.
  const relative = fakeDaemon(dir, { REASONIX_HOME: "rel-home" });
  t.after(() => [ours, theirs, relative].forEach((p) => p.stop()));

  assert.equal(startingDaemon(resolvePaths({ REASONIX_HOME: home })), ours.pid);
  assert.equal(startingDaemon(resolvePaths({ REASONIX_HOME: other })), theirs.pid);
  assert.equal(startingDaemon(resolvePaths({ REASONIX_HOME: join(dir, "rel-home") })), relative.pid);
  assert.equal(startingDaemon(resolvePaths({ REASONIX_HOME: home }), ours.pid), undefined, "the lost daemon is not one coming back");
  assert.equal(startingDaemon(resolvePaths({ REASONIX_HOME: join(dir, "nobody") })), undefined);
  ours.stop();
  const deadline = Date.now() + 5000;
  while (startingDaemon(resolvePaths({ REASONIX_HOME: home })) !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(startingDaemon(resolvePaths({ REASONIX_HOME: home })), undefined, "a process that ended is not starting");
});
