import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { localFiles, writeAtomic } from "./local-files.js";
import { FolderChangedError, pinFolder, pinsFolders, rmdirPinned, unlinkPinned } from "./pinned-folder.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "reasonix-pinned-")));
after(() => rmSync(base, { recursive: true, force: true }));

let n = 0;
/** A fresh workspace and an outside folder beside it. */
function place(): { ws: string; outside: string } {
  n++;
  const ws = join(base, `ws${n}`);
  const outside = join(base, `outside${n}`);
  mkdirSync(ws);
  mkdirSync(outside);
  return { ws, outside };
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

const linuxOnly = { skip: pinsFolders() ? false : "folders are pinned through /proc/self/fd on Linux only" };

test("a folder swapped for a link after it was opened: names made through the pinned folder stay in it", linuxOnly, async () => {
  const { ws, outside } = place();
  const sub = join(ws, "sub");
  mkdirSync(sub);
  const folder = await pinFolder(sub);
  try {
    renameSync(sub, join(ws, "parked"));
    symlinkSync(outside, sub);
    await writeFile(folder.at("a.txt"), "pinned");
    // The control: the same name by path goes through the link.
    await writeFile(join(sub, "b.txt"), "by path");
    assert.equal(await folder.moved(), true);
  } finally {
    await folder.close();
  }
  assert.equal(readFileSync(join(ws, "parked", "a.txt"), "utf8"), "pinned");
  assert.deepEqual(readdirSync(outside), ["b.txt"]);
});

test("a folder that is a link, or is reached through one, is refused before anything is made", linuxOnly, async () => {
  const { ws, outside } = place();
  symlinkSync(outside, join(ws, "link"));
  mkdirSync(join(outside, "deep"));
  const files = localFiles(0o022);
  // The last level is the link; an existing level past the link; missing levels past the link.
  for (const p of ["link/a.txt", "link/deep/a.txt", "link/new/er/a.txt"]) await assert.rejects(files.write(join(ws, p), "x"), FolderChangedError, p);
  for (const p of ["link/a.txt", "link/deep/a.txt"]) await assert.rejects(writeAtomic(join(ws, p), Buffer.from("x"), { umask: 0o022 }), FolderChangedError, p);
  await assert.rejects(unlinkPinned(join(ws, "link", "deep", "gone.txt")), FolderChangedError);
  await assert.rejects(rmdirPinned(join(ws, "link", "deep")), FolderChangedError);
  assert.deepEqual(readdirSync(outside), ["deep"]);
  assert.deepEqual(readdirSync(join(outside, "deep")), []);
  // The message names the path and says nothing was written.
  await assert.rejects(files.write(join(ws, "link/a.txt"), "x"), /the folder of .*link changed while writing .*nothing was written/);
});

test("missing folders are made one verified level at a time; unlink and rmdir go through the parent", async () => {
  const { ws } = place();
  const files = localFiles(0o022);
  await files.write(join(ws, "a/b/c/x.txt"), "deep\n");
  assert.equal(readFileSync(join(ws, "a/b/c/x.txt"), "utf8"), "deep\n");
  await unlinkPinned(join(ws, "a/b/c/x.txt"));
  await rmdirPinned(join(ws, "a/b/c"));
  assert.deepEqual(readdirSync(join(ws, "a/b")), []);
  await assert.rejects(unlinkPinned(join(ws, "a/none/x.txt")), { code: "ENOENT" });
});

/**
 * A separate process keeps moving `sub` away (to parked-N inside the workspace) and putting a link
 * to the outside folder in its place, then undoing that, as fast as it can, while this process
 * writes 200 files through localFiles (half of them into folders it must create first).
 */
const SWAPPER = `
const fs = require("node:fs");
const { SUB: sub, PARKED: parked, OUTSIDE: outside, STOP: stop } = process.env;
// Each state is held for a random moment (up to 1 ms), so writes meet all of them.
const hold = () => { const until = performance.now() + Math.random(); while (performance.now() < until); };
let swaps = 0;
process.stdout.write("go:");
for (let i = 0; ; i++) {
  if (i % 16 === 0 && fs.existsSync(stop)) break;
  const away = parked + "-" + i;
  hold();
  try { fs.renameSync(sub, away); } catch { continue; }
  try { fs.symlinkSync(outside, sub); swaps++; } catch {}
  hold();
  try { fs.unlinkSync(sub); } catch {}
  try { fs.renameSync(away, sub); } catch {}
}
process.stdout.write(String(swaps));
`;

test("a swapper racing 200 writes never gets one outside: each lands inside or fails saying the folder changed", linuxOnly, async () => {
  const { ws, outside } = place();
  const sub = join(ws, "sub");
  mkdirSync(sub);
  const stop = join(base, `stop${n}`);
  const child = spawn(process.execPath, ["-e", SWAPPER], {
    env: { ...process.env, SUB: sub, PARKED: join(ws, "parked"), OUTSIDE: outside, STOP: stop },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
    if (out.startsWith("go:")) started();
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const files = localFiles(0o022);
  const landed: string[] = [];
  let refused = 0;
  try {
    await Promise.race([running, exited.then(() => assert.fail(`the swapper ended before it started: ${out}`))]);
    for (let i = 0; i < 200; i++) {
      const name = i % 2 ? `f${i}.txt` : `d${i}/e/f${i}.txt`;
      try {
        await files.write(join(sub, name), `write ${i}\n`);
        landed.push(`f${i}.txt`);
      } catch (err) {
        assert.ok(err instanceof FolderChangedError, `write ${i} failed otherwise: ${String(err)}`);
        assert.match(err.message, /changed while writing.*nothing was written/);
        refused++;
      }
    }
  } finally {
    writeFileSync(stop, "");
    await exited;
  }
  assert.ok(Number(out.slice(3)) > 0, "the swapper swapped");
  assert.deepEqual(filesUnder(outside), [], "nothing was written outside");
  const inside = filesUnder(ws);
  for (const f of landed) {
    const found = inside.filter((p) => p.endsWith(`/${f}`));
    assert.equal(found.length, 1, `${f} landed inside once`);
    assert.equal(readFileSync(join(ws, found[0]!), "utf8"), `write ${f.slice(1, -4)}\n`);
  }
  assert.equal(landed.length + refused, 200);
});
