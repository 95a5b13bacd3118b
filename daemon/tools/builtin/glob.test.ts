import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { call, fixture, prepared, type Fixture } from "../../../test/support/tool-fixture.js";
import { globToRegExp, splitGlob } from "./glob-match.js";
import { globTool } from "./glob.js";

let f: Fixture;
beforeEach(() => {
  f = fixture();
  for (const p of [
    "a.ts",
    "b.js",
    "src/x.ts",
    "src/y.tsx",
    "src/deep/z.ts",
    "src/deep/q.md",
    "test/t1.ts",
    "node_modules/pkg/index.ts",
    ".git/HEAD",
    "src/node_modules/n.ts",
  ]) {
    mkdirSync(dirname(join(f.dir, p)), { recursive: true });
    writeFileSync(join(f.dir, p), "");
  }
});
afterEach(() => f.cleanup());

const lines = (s: string) => s.split("\n");

test("globToRegExp: **, *, ?, braces, classes, escapes", () => {
  const m = (g: string, p: string) => globToRegExp(g).test(p);
  assert.ok(m("**/*.ts", "a.ts") && m("**/*.ts", "a/b/c.ts") && !m("**/*.ts", "a.tsx"));
  assert.ok(m("*.ts", "a.ts") && !m("*.ts", "d/a.ts"));
  assert.ok(m("src/**", "src/a/b") && !m("src/**", "srcx/a"));
  assert.ok(m("a/**/b", "a/b") && m("a/**/b", "a/x/y/b") && !m("a/**/b", "ab"));
  assert.ok(m("?.js", "b.js") && !m("?.js", "bb.js"));
  assert.ok(m("*.{ts,tsx}", "a.tsx") && m("{src,test}/*.ts", "test/t.ts") && !m("{src,test}/*.ts", "lib/t.ts"));
  assert.ok(m("[ab].txt", "a.txt") && !m("[!ab].txt", "a.txt") && m("[!ab].txt", "c.txt"));
  assert.ok(m("a.b+c(1).txt", "a.b+c(1).txt") && !m("a.b", "axb") && m("\\*.md", "*.md"));
  assert.throws(() => globToRegExp("{a,b"), /unclosed/);
});

test("globToRegExp over unclosed [ runs completes: they are plain characters", { timeout: 10_000 }, () => {
  // One search for "]" per "[" scanned the rest of the pattern each time: 8 s for a million.
  const re = globToRegExp(`${"[".repeat(20_000)}x`);
  assert.equal(re.test(`${"[".repeat(20_000)}x`), true);
  assert.equal(re.test("x"), false);
  assert.equal(globToRegExp("[[ab]c").test("ac"), true, "a later ] still closes a class");
  assert.equal(globToRegExp("[".repeat(1_000_000)).source.length, 2_000_002, "a million, each escaped");
});

test("globToRegExp: repeated **/ compile to one, so a failing deep path is tried once, not once per repeat", () => {
  assert.equal(globToRegExp("**/**/**/**/**/x").source, globToRegExp("**/x").source);
  assert.equal(globToRegExp("a/**/**/b").source, globToRegExp("a/**/b").source);
  const m = (g: string, p: string) => globToRegExp(g).test(p);
  assert.ok(m("a/**/**/b", "a/b") && m("a/**/**/b", "a/x/b") && m("a/**/**/b", "a/x/y/b") && !m("a/**/**/b", "a/x/y/c"));
  assert.ok(m("**/**/x", "x") && m("**/**/x", "p/q/x") && !m("**/**/x", "p/qx"));
});

test("splitGlob moves literal leading folders into the root", () => {
  assert.deepEqual(splitGlob("src/lib/**/*.ts"), { prefix: "src/lib", rest: "**/*.ts" });
  assert.deepEqual(splitGlob("*.ts"), { prefix: "", rest: "*.ts" });
  assert.deepEqual(splitGlob("/etc/*.conf"), { prefix: "/etc", rest: "*.conf" });
  assert.deepEqual(splitGlob("src/a.ts"), { prefix: "src", rest: "a.ts" });
});

test("glob finds files recursively, sorted, skipping .git and node_modules", async () => {
  const r = await call(globTool, { pattern: "**/*.ts" }, f.ctx);
  assert.deepEqual(lines(r.output), ["a.ts", "src/deep/z.ts", "src/x.ts", "test/t1.ts"]);
  assert.deepEqual(lines((await call(globTool, { pattern: "*.ts" }, f.ctx)).output), ["a.ts"]);
  assert.deepEqual(lines((await call(globTool, { pattern: "src/*.{ts,tsx}" }, f.ctx)).output), ["src/x.ts", "src/y.tsx"]);
  assert.deepEqual(lines((await call(globTool, { pattern: "**/?.md", path: "src" }, f.ctx)).output), ["src/deep/q.md"]);
  assert.match((await call(globTool, { pattern: "**/*.py" }, f.ctx)).output, /^No files match/);
});

test("glob reports the real root it reads, for the permission gate", () => {
  const c = prepared(globTool, { pattern: "src/deep/*.ts" }, f.ctx);
  assert.deepEqual(c.access, { type: "read", paths: [join(f.dir, "src/deep")] });
  assert.equal(c.kind, "search");
  const out = prepared(globTool, { pattern: "../*.ts" }, f.ctx);
  assert.deepEqual(out.access, { type: "read", paths: [dirname(f.dir)] });
});

test("glob is bounded and fails on a missing folder", async () => {
  mkdirSync(join(f.dir, "many"));
  for (let i = 0; i < 1010; i++) writeFileSync(join(f.dir, "many", `f${i}.txt`), "");
  const r = await call(globTool, { pattern: "many/*.txt" }, f.ctx);
  assert.equal(lines(r.output).filter((l) => l.startsWith("many/")).length, 1000);
  assert.match(r.output, /\[10 more matches not shown/);
  const missing = await call(globTool, { pattern: "*.ts", path: "nope" }, f.ctx);
  assert.equal(missing.failed, true);
  assert.match(missing.output, /No such file or directory: nope/);
});
