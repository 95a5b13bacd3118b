import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { call, fixture, prepared, type Fixture } from "../../../test/support/tool-fixture.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";

let f: Fixture;
const put = (p: string, body: string | Buffer) => {
  mkdirSync(dirname(join(f.dir, p)), { recursive: true });
  writeFileSync(join(f.dir, p), body);
};
beforeEach(() => {
  f = fixture();
  put("src/a.ts", "const needle = 1;\nother\nNEEDLE again\r\n");
  put("src/b.md", "a needle in docs\n");
  put("node_modules/x/index.js", "needle\n");
  put(".git/config", "needle\n");
  put("bin.dat", Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2])]));
  put("latin.txt", Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0xe9, 0x0a]));
  put("huge.txt", `needle\n${"x".repeat(2 * 1024 * 1024)}`);
});
afterEach(() => f.cleanup());

test("grep prints path:line: text, skipping node_modules, .git, binary and huge files", async () => {
  const c = prepared(grepTool, { pattern: "needle" }, f.ctx);
  assert.equal(c.title, "Grep needle");
  assert.deepEqual(c.access, { type: "read", paths: [f.dir] });
  const r = await c.run(f.ctx);
  assert.equal(r.output, "latin.txt:1: needleé\nsrc/a.ts:1: const needle = 1;\nsrc/b.md:1: a needle in docs");
  assert.deepEqual(r.rawOutput, { matches: 3, files: 3 });
});

test("grep: ignoreCase, glob filter, path to one file", async () => {
  const ci = await call(grepTool, { pattern: "needle", ignoreCase: true, glob: "*.ts" }, f.ctx);
  assert.equal(ci.output, "src/a.ts:1: const needle = 1;\nsrc/a.ts:3: NEEDLE again");
  const nested = await call(grepTool, { pattern: "needle", glob: "src/**/*.md" }, f.ctx);
  assert.equal(nested.output, "src/b.md:1: a needle in docs");
  const one = await call(grepTool, { pattern: "^other$", path: "src/a.ts" }, f.ctx);
  assert.equal(one.output, "src/a.ts:2: other");
  assert.equal((await call(grepTool, { pattern: "absent" }, f.ctx)).output, "No matches.");
});

test("grep bounds matches and clips long lines", async () => {
  put("many.txt", Array.from({ length: 300 }, (_, i) => `hit ${i} ${"y".repeat(i === 0 ? 500 : 1)}`).join("\n"));
  const r = await call(grepTool, { pattern: "^hit", path: "many.txt" }, f.ctx);
  const lines = r.output.split("\n");
  assert.equal(lines.filter((l) => l.startsWith("many.txt:")).length, 200);
  assert.equal(lines[0]!.length, "many.txt:1: ".length + 300);
  assert.match(r.output, /\[Stopped after 200 matches; narrow/);
  const five = await call(grepTool, { pattern: "^hit", path: "many.txt", maxResults: 5 }, f.ctx);
  assert.equal(five.output.split("\n").filter((l) => l.startsWith("many.txt:")).length, 5);
  const exact = await call(grepTool, { pattern: "needle", path: "src/b.md", maxResults: 1 }, f.ctx);
  assert.equal(exact.output, "src/b.md:1: a needle in docs");
});

test("grep reports an invalid regex or glob as a failed call", async () => {
  const r = await call(grepTool, { pattern: "foo(" }, f.ctx);
  assert.equal(r.failed, true);
  assert.match(r.output, /^Invalid regular expression "foo\(":/);
  const g = await call(grepTool, { pattern: "x", glob: "{a,b" }, f.ctx);
  assert.equal(g.failed, true);
  assert.equal((await call(grepTool, { pattern: "x", path: "missing" }, f.ctx)).failed, true);
});

test("grep given a FIFO as its path answers at once without reading it", async () => {
  execFileSync("mkfifo", [join(f.dir, "pipe")]);
  const r = await call(grepTool, { pattern: "needle", path: "pipe" }, f.ctx);
  assert.equal(r.failed, undefined);
  assert.doesNotMatch(r.output, /needle/);
});

test("grep and glob follow no link out of the session's folders: they count the links and name them; a link inside is searched", async (t) => {
  const outside = realpathSync(mkdtempSync(join(tmpdir(), "rx-outside-")));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(join(outside, "id_ed25519"), "needle PRIVATE KEY\n");
  symlinkSync(join(outside, "id_ed25519"), join(f.dir, "src", "setup.md"));
  symlinkSync("/proc/self/environ", join(f.dir, "env.txt"));
  symlinkSync("a.ts", join(f.dir, "src", "alias.ts"));

  const r = await call(grepTool, { pattern: "needle|PATH=|=" }, f.ctx);
  assert.ok(!r.output.includes("PRIVATE KEY") && !r.output.includes("PATH="), r.output);
  assert.match(r.output, /^src\/a\.ts:1: const needle = 1;\nsrc\/alias\.ts:1: const needle = 1;/m, "a link inside is searched");
  assert.match(r.output, /\[Skipped 2 links that lead outside the workspace folders: env\.txt, src\/setup\.md\. read_file on one asks the user first\.\]$/);
  assert.equal(r.rawOutput?.skippedLinks, 2);

  const g = await call(globTool, { pattern: "**/*.{md,txt,ts}" }, f.ctx);
  assert.ok(!g.output.split("\n").includes("src/setup.md") && !g.output.split("\n").includes("env.txt"), g.output);
  assert.ok(g.output.split("\n").includes("src/alias.ts"));
  assert.match(g.output, /\[Skipped 2 links that lead outside the workspace folders: env\.txt, src\/setup\.md\./);

  // Asked for by name, the link is judged where it leads: outside, so the permission gate asks.
  assert.deepEqual(prepared(grepTool, { pattern: "x", path: "src/setup.md" }, f.ctx).access, { type: "read", paths: [join(outside, "id_ed25519")] });
  // Once the user allowed that folder, what is under it is searched.
  const allowed = await call(grepTool, { pattern: "needle", path: outside }, f.ctx);
  assert.equal(allowed.output, `${join(outside, "id_ed25519")}:1: needle PRIVATE KEY`);
});
