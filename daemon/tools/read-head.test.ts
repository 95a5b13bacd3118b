import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readHead } from "./read-head.js";

test("readHead reads a small file whole, stops at maxBytes on a larger one, and reads no device or FIFO", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-head-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "small"), "héllo");
  assert.deepEqual(await readHead(join(dir, "small"), 64), { text: "héllo", complete: true });
  assert.deepEqual(await readHead(join(dir, "small"), 6), { text: "héllo", complete: true }, "exactly maxBytes is whole");
  writeFileSync(join(dir, "big"), "x".repeat(10_000));
  assert.deepEqual(await readHead(join(dir, "big"), 100), { text: "x".repeat(100), complete: false });
  // A symlink to a device that never ends, and a FIFO that would block: neither is read.
  symlinkSync("/dev/zero", join(dir, "zero"));
  assert.equal(await readHead(join(dir, "zero"), 100), undefined);
  execFileSync("mkfifo", [join(dir, "fifo")]);
  assert.equal(await readHead(join(dir, "fifo"), 100), undefined);
  await assert.rejects(readHead(join(dir, "missing"), 100), { code: "ENOENT" });
});
