import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Level } from "level";
import { isDaemonCommandLine, storeLockHolder } from "./store-lock.js";

test("storeLockHolder names the process holding a LevelDB's lock, and nobody once it is closed", async (t) => {
  const dir = mkdtempSync("/tmp/rx-lock-");
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const dbDir = join(dir, "db");
  assert.equal(storeLockHolder(dbDir), undefined, "no store yet");
  const db = new Level(dbDir);
  await db.open();
  const holder = storeLockHolder(dbDir);
  await db.close();
  assert.deepEqual(holder, { pid: process.pid, command: "node", isDaemon: false });
  assert.equal(storeLockHolder(dbDir), undefined);
});

test("isDaemonCommandLine: `reasonix daemon run` through node or the bin, nothing else", () => {
  assert.equal(isDaemonCommandLine(["/usr/bin/node", "/opt/reasonix/bin/reasonix.js", "daemon", "run"]), true);
  assert.equal(isDaemonCommandLine(["/usr/local/bin/reasonix", "daemon", "run"]), true);
  assert.equal(isDaemonCommandLine(["/usr/bin/node", "/opt/reasonix/bin/reasonix.js", "daemon", "status"]), false);
  assert.equal(isDaemonCommandLine(["/usr/bin/node", "/tmp/other.js", "daemon", "run"]), false);
  assert.equal(isDaemonCommandLine(["daemon", "run"]), false);
});
