import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { call, fixture, prepared, type Fixture } from "../../../test/support/tool-fixture.js";
import { readFileTool } from "./read-file.js";
import { listDirectoryTool } from "./list-directory.js";
import { editFileTool } from "./edit-file.js";
import { MAX_TEXT_FILE_BYTES } from "../local-files.js";

let f: Fixture;
beforeEach(() => (f = fixture()));
afterEach(() => f.cleanup());

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

test("read_file numbers lines and shows the text read", async () => {
  writeFileSync(join(f.dir, "a.txt"), "alpha\r\nbeta\n");
  const r = await call(readFileTool, { path: "a.txt" }, f.ctx);
  assert.equal(r.failed, undefined);
  assert.equal(r.output, "    1\talpha\n    2\tbeta");
  assert.deepEqual(r.content, [{ type: "content", content: { type: "text", text: "alpha\r\nbeta" } }]);
});

test("read_file pages with offset/limit and says how to go on", async () => {
  writeFileSync(join(f.dir, "long.txt"), numbered(50));
  const c = prepared(readFileTool, { path: "long.txt", offset: 10, limit: 31 }, f.ctx);
  assert.equal(c.title, "Read long.txt (lines 10–40)");
  assert.deepEqual(c.locations, [{ path: join(f.dir, "long.txt"), line: 10 }]);
  assert.deepEqual(c.access, { type: "read", paths: [join(f.dir, "long.txt")] });
  const r = await c.run(f.ctx);
  const lines = r.output.split("\n");
  assert.equal(lines[0], "   10\tline 10");
  assert.equal(lines[30], "   40\tline 40");
  assert.match(r.output, /\[Showing lines 10–40 of 50\. Use offset=41 to read more\.\]$/);
});

test("read_file reads 2000 lines by default and clips huge lines", async () => {
  writeFileSync(join(f.dir, "big.txt"), numbered(2500) + "x".repeat(5000) + "\n");
  const r = await call(readFileTool, { path: join(f.dir, "big.txt") }, f.ctx);
  assert.match(r.output, / 2000\tline 2000\n\n\[Showing lines 1–2000 of 2501\. Use offset=2001/);
  const tail = await call(readFileTool, { path: "big.txt", offset: 2501 }, f.ctx);
  assert.match(tail.output, /^ 2501\tx{2000}… \[line clipped at 2000 chars\]/);
});

test("read_file fails clearly: missing, past the end, binary, directory, bad args", async () => {
  writeFileSync(join(f.dir, "short.txt"), "one\n");
  writeFileSync(join(f.dir, "img.png"), Buffer.from([0x89, 0x50, 0x00, 0x01]));
  mkdirSync(join(f.dir, "sub"));
  const cases: [unknown, RegExp][] = [
    [{ path: "nope.txt" }, /No such file or directory: nope\.txt/],
    [{ path: "short.txt", offset: 5 }, /has 1 line; offset 5 is past the end/],
    [{ path: "img.png" }, /binary/],
    [{ path: "sub" }, /is a directory/],
  ];
  for (const [args, re] of cases) {
    const r = await call(readFileTool, args, f.ctx);
    assert.equal(r.failed, true);
    assert.match(r.output, re);
  }
  const bad = readFileTool.prepare({ path: "short.txt", offset: 0 }, f.ctx);
  assert.equal(bad.ok, false);
  assert.match(!bad.ok ? bad.error : "", /invalid arguments for read_file: offset/);
});

test("a file over the size bound, and a FIFO are refused before they are read, naming what to use instead", async () => {
  // Sparse: the bound is checked on the open handle's size, so nothing of it is read.
  const huge = join(f.dir, "huge.log");
  writeFileSync(huge, "");
  truncateSync(huge, MAX_TEXT_FILE_BYTES + 1);
  const big = await call(readFileTool, { path: "huge.log" }, f.ctx);
  assert.equal(big.failed, true);
  assert.match(big.output, /huge\.log is 16\.0 MiB; files are read whole up to 16\.0 MiB\. Search it with grep, or read a part with run_command/);
  const edit = await call(editFileTool, { path: "huge.log", oldText: "a", newText: "b" }, f.ctx);
  assert.equal(edit.failed, true);
  assert.match(edit.output, /files are read whole up to/);

  // Opening a FIFO for reading would wait for a writer; it is refused at once instead.
  execFileSync("mkfifo", [join(f.dir, "pipe")]);
  const fifo = await call(readFileTool, { path: "pipe" }, f.ctx);
  assert.equal(fifo.failed, true);
  assert.match(fifo.output, /pipe is not a regular file \(a device, pipe or socket\)/);
});

test("list_directory sorts entries and marks folders", async () => {
  mkdirSync(join(f.dir, "src"));
  mkdirSync(join(f.dir, ".git"));
  writeFileSync(join(f.dir, "b.txt"), "");
  writeFileSync(join(f.dir, "a.txt"), "");
  const c = prepared(listDirectoryTool, {}, f.ctx);
  assert.equal(c.title, "List .");
  assert.deepEqual(c.access, { type: "read", paths: [f.dir] });
  const r = await c.run(f.ctx);
  assert.equal(r.output, ".git/\na.txt\nb.txt\nsrc/");
  assert.match((await call(listDirectoryTool, { path: "src" }, f.ctx)).output, /src is empty/);
  assert.equal((await call(listDirectoryTool, { path: "a.txt" }, f.ctx)).failed, true);
});

test("list_directory is bounded", async () => {
  mkdirSync(join(f.dir, "many"));
  for (let i = 0; i < 1005; i++) writeFileSync(join(f.dir, "many", `f${String(i).padStart(4, "0")}`), "");
  const r = await call(listDirectoryTool, { path: "many" }, f.ctx);
  assert.equal(r.output.split("\n").filter((l) => l.startsWith("f")).length, 1000);
  assert.match(r.output, /\[5 more entries not shown/);
});
