import assert from "node:assert/strict";
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { localFiles } from "./local-files.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "reasonix-files-")));
after(() => rmSync(dir, { recursive: true, force: true }));
const files = localFiles(0o022);

test("reads UTF-8 and writes it back byte for byte, BOM included", async () => {
  const p = join(dir, "bom.txt");
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("héllo → wörld\n")]);
  writeFileSync(p, bytes);
  const r = await files.read(p);
  assert.equal(r.encoding, "utf8");
  assert.equal(r.text, "\ufeffhéllo → wörld\n");
  await files.write(p, r.text, r.encoding);
  assert.deepEqual(readFileSync(p), bytes);
});

test("reads invalid UTF-8 as Latin-1 and keeps its bytes on write", async () => {
  const p = join(dir, "latin.txt");
  writeFileSync(p, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // "café\n" in Latin-1
  const r = await files.read(p);
  assert.deepEqual(r, { text: "café\n", encoding: "latin1" });
  await files.write(p, r.text.replace("caf", "CAF"));
  assert.deepEqual(readFileSync(p), Buffer.from([0x43, 0x41, 0x46, 0xe9, 0x0a]));
});

test("refuses to write characters Latin-1 cannot hold when Latin-1 was asked for", async () => {
  const p = join(dir, "latin2.txt");
  writeFileSync(p, Buffer.from([0xe9]));
  await assert.rejects(files.write(p, "€", "latin1"), /Latin-1/);
  assert.deepEqual(readFileSync(p), Buffer.from([0xe9]));
  await files.write(p, "€"); // inferred Latin-1 gives way to UTF-8
  assert.equal(readFileSync(p, "utf8"), "€");
});

test("a NUL byte in the first 8 KiB makes a file binary", async () => {
  const p = join(dir, "bin.dat");
  writeFileSync(p, Buffer.from([0x50, 0x4b, 0x00, 0x01]));
  await assert.rejects(files.read(p), /binary/);
  const late = join(dir, "late-nul.txt");
  writeFileSync(late, Buffer.concat([Buffer.alloc(9000, 0x61), Buffer.from([0])]));
  assert.equal((await files.read(late)).encoding, "utf8");
});

test("write creates parent folders; exists tells files apart from nothing", async () => {
  const p = join(dir, "a", "b", "c.txt");
  assert.equal(await files.exists(p), false);
  await files.write(p, "x");
  assert.equal(await files.exists(p), true);
  assert.equal(readFileSync(p, "utf8"), "x");
  await assert.rejects(files.read(join(dir, "missing.txt")), { code: "ENOENT" });
});

test("a write replaces a hard link instead of writing through it; the file outside keeps its bytes", async () => {
  const outside = join(dir, "outside");
  const workspace = join(dir, "workspace");
  mkdirSync(outside);
  mkdirSync(workspace);
  writeFileSync(join(outside, "secret.txt"), "outside\n", { mode: 0o640 });
  chmodSync(join(outside, "secret.txt"), 0o640);
  const p = join(workspace, "linked.txt");
  linkSync(join(outside, "secret.txt"), p);
  await files.write(p, "inside\n");
  assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "outside\n");
  assert.equal(readFileSync(p, "utf8"), "inside\n");
  assert.equal(statSync(p).nlink, 1);
  assert.equal(statSync(join(outside, "secret.txt")).nlink, 1);
  assert.equal(statSync(p).mode & 0o7777, 0o640);
  assert.deepEqual(readdirSync(workspace), ["linked.txt"]);
});

test("a write keeps the file's mode, leaves no temporary file, and a new file gets 0666 less the umask", async () => {
  const p = join(dir, "run.sh");
  writeFileSync(p, "#!/bin/sh\necho 1\n");
  chmodSync(p, 0o750);
  await files.write(p, "#!/bin/sh\necho 2\n");
  assert.equal(statSync(p).mode & 0o7777, 0o750);
  assert.equal(readFileSync(p, "utf8"), "#!/bin/sh\necho 2\n");
  const fresh = join(dir, "fresh.txt");
  await files.write(fresh, "new");
  assert.equal(statSync(fresh).mode & 0o7777, 0o644);
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.endsWith(".tmp")),
    [],
  );
});

test("a failed write leaves the old file whole and no temporary file behind", async () => {
  const sub = join(dir, "failing");
  mkdirSync(sub);
  const p = join(sub, "keep.txt");
  writeFileSync(p, Buffer.from([0xe9]));
  await assert.rejects(files.write(p, "€", "latin1"), /Latin-1/);
  // A folder in the way of the rename: the temporary file is written, then the rename fails.
  const asDir = join(sub, "a-folder");
  mkdirSync(asDir);
  await assert.rejects(files.write(asDir, "text"));
  assert.deepEqual(readFileSync(p), Buffer.from([0xe9]));
  assert.deepEqual(readdirSync(sub).sort(), ["a-folder", "keep.txt"]);
});

test("a write replaces a symbolic link at the path it is given rather than following it", async () => {
  // Tools resolve links before the boundary check and pass the real path; a link that appears at
  // that path afterwards must not carry the write elsewhere.
  const target = join(dir, "symlink-target.txt");
  writeFileSync(target, "target\n");
  const p = join(dir, "symlink.txt");
  symlinkSync(target, p);
  await files.write(p, "replaced\n");
  assert.equal(readFileSync(target, "utf8"), "target\n");
  assert.equal(readFileSync(p, "utf8"), "replaced\n");
});

test("a new file and the folders made for it get the session's umask, not the process's; an existing file keeps its mode", async () => {
  for (const [umask, file, folder] of [
    [0o027, 0o640, 0o750],
    [0o002, 0o664, 0o775],
  ] as const) {
    const base = join(dir, `modes-${umask.toString(8)}`);
    await localFiles(umask).write(join(base, "deep", "new.txt"), "new\n");
    assert.equal(statSync(join(base, "deep", "new.txt")).mode & 0o777, file);
    for (const d of [base, join(base, "deep")]) assert.equal(statSync(d).mode & 0o777, folder, d);
  }
  const kept = join(dir, "modes-27", "kept.txt");
  writeFileSync(kept, "old\n");
  chmodSync(kept, 0o604);
  await localFiles(0o027).write(kept, "new\n");
  assert.equal(statSync(kept).mode & 0o777, 0o604);
});
