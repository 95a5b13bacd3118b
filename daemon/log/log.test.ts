import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { closeLogger, createLogger, logOpened, setRotation } from "./log.js";

test("the log rotates at its size and keeps the configured number of older files; the newest lines are in daemon.log", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-log-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "daemon.log");
  const log = createLogger(file, "info");
  setRotation(log, { maxBytes: 20_000, keep: 3 });
  await logOpened(log);
  // As a daemon logs: a few lines at a time, the file written out in between.
  for (let i = 0; i < 2000; i++) {
    log.info({ i, filler: "x".repeat(100) }, `line ${i}`);
    if (i % 20 === 19) await logOpened(log);
  }
  log.info("the last line");
  await closeLogger(log);
  assert.deepEqual(readdirSync(dir).sort(), ["daemon.log", "daemon.log.1", "daemon.log.2", "daemon.log.3"]);
  for (const name of ["daemon.log.1", "daemon.log.2", "daemon.log.3"]) {
    // A file holds what was written up to the limit, plus at most the line that crossed it.
    assert.ok(statSync(join(dir, name)).size < 20_000 + 1000, `${name}: ${statSync(join(dir, name)).size} bytes`);
  }
  assert.match(readFileSync(file, "utf8"), /the last line/);
  const kept = ["daemon.log.3", "daemon.log.2", "daemon.log.1", "daemon.log"].map((n) => readFileSync(join(dir, n), "utf8")).join("");
  const numbers = [...kept.matchAll(/"i":(\d+)/g)].map((m) => Number(m[1]));
  assert.deepEqual(
    numbers,
    numbers.slice().sort((a, b) => a - b),
    "the kept files are in order",
  );
  assert.equal(numbers.at(-1), 1999, "nothing recent was lost");
});

test("an uncaught error's stack lands in the log folder, and the process ends", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-crash-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const crashFile = join(dir, "crash.log");
  const crashModule = fileURLToPath(new URL("./crash.js", import.meta.url));
  const script = `import(${JSON.stringify(crashModule)}).then((m) => { m.recordCrashes(${JSON.stringify(crashFile)}); setTimeout(() => { throw new Error("boom from a timer"); }, 0); });`;
  const code = await new Promise<number | null>((resolve) =>
    execFile(process.execPath, ["-e", script], (err) => resolve(err ? ((err as { code?: number }).code ?? null) : 0)),
  );
  assert.equal(code, 70);
  assert.ok(existsSync(crashFile));
  const entry = readFileSync(crashFile, "utf8");
  assert.match(entry, /uncaught exception: Error: boom from a timer\n\s+at /);
});
