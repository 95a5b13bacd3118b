import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { OutsideError, openedPath, outsideNotice, readHead, realPathInside } from "./read-head.js";

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

test("readHead with `inside` reads a file or an inside link, and reads nothing whose real path lies elsewhere", async (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-head-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(join(ws, "docs"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(ws, "docs", "rules.md"), "inside");
  writeFileSync(join(outside, "key"), "SECRET");
  symlinkSync("docs/rules.md", join(ws, "rules.md"));
  symlinkSync(join(outside, "key"), join(ws, "key"));
  symlinkSync("/proc/self/environ", join(ws, "env"));
  symlinkSync(outside, join(ws, "out"));
  symlinkSync(join(ws, "gone"), join(ws, "dangling"));

  assert.deepEqual(await readHead(join(ws, "rules.md"), 64, [ws]), { text: "inside", complete: true });
  await assert.rejects(
    readHead(join(ws, "key"), 64, [ws]),
    (err: unknown) => err instanceof OutsideError && err.real === join(outside, "key") && err.path === join(ws, "key"),
  );
  await assert.rejects(readHead(join(ws, "env"), 64, [ws]), (err: unknown) => err instanceof OutsideError && /^\/proc\/\d+\/environ$/.test(err.real));
  await assert.rejects(readHead(join(ws, "out", "key"), 64, [ws]), OutsideError, "a folder along the way that links out counts too");
  await assert.rejects(readHead(join(ws, "dangling"), 64, [ws]), { code: "ENOENT" });
  assert.deepEqual(await readHead(join(ws, "key"), 64, [ws, outside]), { text: "SECRET", complete: true }, "inside another allowed folder");
  assert.equal(await realPathInside(join(ws, "rules.md"), [ws]), join(ws, "docs", "rules.md"));
  assert.equal(outsideNotice("AGENTS.md", "the repository", "/x"), "Skipped AGENTS.md: it links outside the repository (to /x).");
});

test("openedPath names the file an fd really holds, where the system can say", { skip: !existsSync("/proc/self/fd") }, (t) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-head-")));
  t.after(() => rmSync(base, { recursive: true, force: true }));
  writeFileSync(join(base, "real"), "x");
  symlinkSync(join(base, "real"), join(base, "link"));
  const fd = openSync(join(base, "link"), "r");
  try {
    assert.equal(openedPath(fd), join(base, "real"));
  } finally {
    closeSync(fd);
  }
});
