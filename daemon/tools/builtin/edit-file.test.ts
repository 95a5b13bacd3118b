import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { editFileTool } from "./edit-file.js";
import { call, fixture, prepared, type Fixture } from "../../../test/support/tool-fixture.js";
import { writeFileTool } from "./write-file.js";

let f: Fixture;
let file: string;
const SRC = "function a() {\n  return 1;\n}\nfunction b() {\n  return 1;\n}\n";
beforeEach(() => {
  f = fixture();
  file = join(f.dir, "m.js");
  writeFileSync(file, SRC);
});
afterEach(() => f.cleanup());

test("edit_file applies edits in order and shows one whole-file diff", async () => {
  const c = prepared(
    editFileTool,
    {
      path: "m.js",
      edits: [
        { oldText: "function a() {\n  return 1;", newText: "function a() {\n  return 2;" },
        { oldText: "return 2;", newText: "return 3;" },
      ],
    },
    f.ctx,
  );
  assert.equal(c.title, "Edit m.js");
  assert.equal(c.kind, "edit");
  assert.deepEqual(c.access, { type: "write", paths: [file], named: [file] });
  assert.deepEqual(c.locations, [{ path: file }]);
  const r = await c.run(f.ctx);
  assert.equal(r.failed, undefined);
  assert.equal(r.output, "Applied 2 edits to m.js.");
  const after = SRC.replace("return 1;", "return 3;");
  assert.equal(readFileSync(file, "utf8"), after);
  assert.deepEqual(r.content, [{ type: "diff", path: file, oldText: SRC, newText: after }]);
});

test("edit_file takes a single top-level oldText/newText, and replaceAll", async () => {
  assert.equal((await call(editFileTool, { path: file, oldText: "b()", newText: "c()" }, f.ctx)).failed, undefined);
  assert.equal((await call(editFileTool, { path: "m.js", oldText: "return 1;", newText: "return 0;", replaceAll: true }, f.ctx)).failed, undefined);
  assert.equal(readFileSync(file, "utf8"), SRC.replace("b()", "c()").replaceAll("return 1;", "return 0;"));
  const bad = editFileTool.prepare({ path: "m.js", oldText: "x" }, f.ctx);
  assert.equal(bad.ok, false);
  assert.match(!bad.ok ? bad.error : "", /either edits/);
});

test("edit_file: not found and ambiguous fail with a hint, writing nothing", async () => {
  const missing = await call(editFileTool, { path: "m.js", oldText: "return 9;", newText: "x" }, f.ctx);
  assert.equal(missing.failed, true);
  assert.match(missing.output, /Edit failed in m\.js: oldText not found/);
  const amb = await call(editFileTool, { path: "m.js", oldText: "return 1;", newText: "x" }, f.ctx);
  assert.equal(amb.failed, true);
  assert.match(amb.output, /oldText is not unique: 2 matches \(lines 2, 5\); include more surrounding lines/);
  assert.equal(readFileSync(file, "utf8"), SRC);
});

test("edit_file is atomic: a later failing edit leaves the file untouched", async () => {
  const r = await call(
    editFileTool,
    {
      path: "m.js",
      edits: [
        { oldText: "function a", newText: "function A" },
        { oldText: "function a", newText: "again" },
      ],
    },
    f.ctx,
  );
  assert.equal(r.failed, true);
  assert.match(r.output, /^Edit 2 of 2 failed in m\.js: oldText not found.*Nothing was changed\.$/);
  assert.equal(readFileSync(file, "utf8"), SRC);
});

test("edit_file refuses binary files, missing files and no-op edits", async () => {
  writeFileSync(join(f.dir, "b.bin"), Buffer.from([1, 0, 2]));
  const bin = await call(editFileTool, { path: "b.bin", oldText: "a", newText: "b" }, f.ctx);
  assert.equal(bin.failed, true);
  assert.match(bin.output, /binary/);
  const gone = await call(editFileTool, { path: "new.js", oldText: "a", newText: "b" }, f.ctx);
  assert.match(gone.output, /No such file or directory: new\.js \(use write_file/);
  const same = await call(editFileTool, { path: "m.js", oldText: "b()", newText: "b()" }, f.ctx);
  assert.equal(same.failed, true);
  assert.match(same.output, /unchanged/);
});

test("edit_file keeps a Latin-1 file's bytes and encoding", async () => {
  const latin = join(f.dir, "l.txt");
  writeFileSync(latin, Buffer.from("caf\xe9 cr\xe8me\n", "latin1"));
  const r = await call(editFileTool, { path: "l.txt", oldText: "café", newText: "thé" }, f.ctx);
  assert.equal(r.failed, undefined);
  assert.deepEqual(readFileSync(latin), Buffer.from("th\xe9 cr\xe8me\n", "latin1"));
  const euro = await call(editFileTool, { path: "l.txt", oldText: "thé", newText: "5 €" }, f.ctx);
  assert.equal(euro.failed, true);
  assert.match(euro.output, /Latin-1/);
  assert.deepEqual(readFileSync(latin), Buffer.from("th\xe9 cr\xe8me\n", "latin1"));
});

test("edit_file matches LF oldText in a CRLF file and keeps CRLF", async () => {
  const crlf = join(f.dir, "w.txt");
  writeFileSync(crlf, "one\r\ntwo\r\nthree\r\n");
  const r = await call(editFileTool, { path: "w.txt", oldText: "one\ntwo", newText: "1\n2" }, f.ctx);
  assert.equal(r.failed, undefined);
  assert.equal(readFileSync(crlf, "utf8"), "1\r\n2\r\nthree\r\n");
});

test("write_file creates with parents, overwrites, and diffs against the old text", async () => {
  const c = prepared(writeFileTool, { path: "new/dir/x.txt", content: "a\nb\n" }, f.ctx);
  assert.equal(c.title, "Write new/dir/x.txt");
  assert.deepEqual(c.access, { type: "write", paths: [join(f.dir, "new/dir/x.txt")], named: [join(f.dir, "new/dir/x.txt")] });
  const created = await c.run(f.ctx);
  assert.equal(created.output, "Created new/dir/x.txt (2 lines).");
  assert.deepEqual(created.content, [{ type: "diff", path: join(f.dir, "new/dir/x.txt"), oldText: null, newText: "a\nb\n" }]);
  const over = await call(writeFileTool, { path: "m.js", content: "x" }, f.ctx);
  assert.equal(over.output, "Wrote m.js (1 line).");
  assert.deepEqual(over.content, [{ type: "diff", path: file, oldText: SRC, newText: "x" }]);
  assert.equal(readFileSync(file, "utf8"), "x");
});

test("write_file keeps Latin-1 when it can and says so when it cannot", async () => {
  const latin = join(f.dir, "l.txt");
  writeFileSync(latin, Buffer.from([0xe9]));
  await call(writeFileTool, { path: "l.txt", content: "è" }, f.ctx);
  assert.deepEqual(readFileSync(latin), Buffer.from([0xe8]));
  const r = await call(writeFileTool, { path: "l.txt", content: "€" }, f.ctx);
  assert.match(r.output, /as UTF-8/);
  assert.equal(readFileSync(latin, "utf8"), "€");
});

test("edit_file refuses a file that changed since it was read, until it is read again; its own writes do not count", async () => {
  const { readFileTool } = await import("./read-file.js");
  await call(readFileTool, { path: "m.js" }, f.ctx);
  assert.equal((await call(editFileTool, { path: "m.js", oldText: "function b", newText: "function c" }, f.ctx)).failed, undefined);
  assert.equal((await call(editFileTool, { path: "m.js", oldText: "function c", newText: "function d" }, f.ctx)).failed, undefined, "after its own edit");
  writeFileSync(file, `${readFileSync(file, "utf8")}// someone else\n`);
  const stale = await call(editFileTool, { path: "m.js", oldText: "function d", newText: "function e" }, f.ctx);
  assert.equal(stale.failed, true);
  assert.match(stale.output, /m\.js has changed since you last read it.*Read the file again/);
  assert.match(readFileSync(file, "utf8"), /function d[\s\S]*someone else/);
  await call(readFileTool, { path: "m.js" }, f.ctx);
  assert.equal((await call(editFileTool, { path: "m.js", oldText: "function d", newText: "function e" }, f.ctx)).failed, undefined);
});
