/**
 * grep and glob on the search thread answer exactly what the in-loop implementation they replaced
 * answered. That implementation is kept below, as it was, as the oracle.
 */
import assert from "node:assert/strict";
import type { Dirent } from "node:fs";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { decodeBytes, looksBinary } from "../local-files.js";
import { displayPath } from "../workspace.js";
import { absPath, clip, toPosix } from "./common.js";
import { call, fixture, type Fixture } from "../../../test/support/tool-fixture.js";
import { globToRegExp, splitGlob } from "./glob-match.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";

// ---- the previous implementation (grep.ts, glob.ts and walk.ts before the search thread) --------

const SKIPPED = new Set([".git", "node_modules"]);

async function* oldWalk(root: string, state: { incomplete: boolean }, maxEntries = 200_000): AsyncGenerator<string> {
  const top = await stat(root);
  if (!top.isDirectory()) {
    yield root;
    return;
  }
  let budget = maxEntries;
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      if (--budget < 0) {
        state.incomplete = true;
        return;
      }
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIPPED.has(e.name)) subdirs.push(full);
      } else if (
        e.isFile() ||
        (e.isSymbolicLink() &&
          (await stat(full).then(
            (s) => s.isFile(),
            () => false,
          )))
      ) {
        yield full;
      }
    }
    stack.push(...subdirs.reverse());
  }
}

async function oldGrep(cwd: string, a: { pattern: string; path?: string; glob?: string; ignoreCase?: boolean; maxResults?: number }) {
  const re = new RegExp(a.pattern, a.ignoreCase ? "i" : "");
  const g = a.glob ? globToRegExp(a.glob) : undefined;
  const filter =
    g && a.glob
      ? a.glob.includes("/")
        ? (r: string, f: string) => g.test(toPosix(relative(r, f)))
        : (_r: string, f: string) => g.test(basename(f))
      : undefined;
  const root = absPath({ cwd }, a.path);
  const max = a.maxResults ?? 200;
  const hits: string[] = [];
  const files = new Set<string>();
  const state = { incomplete: false };
  let more = false;
  for await (const file of oldWalk(root, state)) {
    if (more) break;
    if (filter && !filter(root, file)) continue;
    const shown = displayPath(cwd, file);
    try {
      if ((await stat(file)).size > 2 * 1024 * 1024) continue;
      const bytes = await readFile(file);
      if (looksBinary(bytes)) continue;
      const lines = decodeBytes(bytes).text.split("\n");
      for (let i = 0; i < lines.length; i++) {
        if (!re.test(lines[i]!)) continue;
        if (hits.length >= max) {
          more = true;
          break;
        }
        hits.push(`${shown}:${i + 1}: ${clip(lines[i]!.replace(/\r$/, ""), 300)}`);
        files.add(file);
      }
    } catch {
      // unreadable: not searched
    }
  }
  const notes: string[] = [];
  if (more) notes.push(`Stopped after ${max} matches; narrow the pattern, path or glob to see the rest.`);
  if (state.incomplete) notes.push("The folder is too large to search completely; results are partial.");
  let output = hits.length ? hits.join("\n") : "No matches.";
  if (notes.length) output += `\n\n[${notes.join(" ")}]`;
  return { output, rawOutput: { matches: hits.length, files: files.size } };
}

async function oldGlob(cwd: string, a: { pattern: string; path?: string }) {
  const { prefix, rest } = splitGlob(a.pattern);
  const base = absPath({ cwd }, a.path);
  const root = prefix ? absPath({ cwd: base }, prefix) : base;
  const re = globToRegExp(rest);
  const found: string[] = [];
  const state = { incomplete: false };
  for await (const file of oldWalk(root, state)) if (re.test(toPosix(relative(root, file)))) found.push(file);
  found.sort();
  const shown = found.slice(0, 1000).map((f) => displayPath(cwd, f));
  const notes: string[] = [];
  if (found.length > 1000) notes.push(`${found.length - 1000} more matches not shown; use a narrower pattern.`);
  if (state.incomplete) notes.push("The folder is too large to search completely; results are partial.");
  let output = shown.length ? shown.join("\n") : `No files match ${a.pattern}.`;
  if (notes.length) output += `\n\n[${notes.join(" ")}]`;
  return { output, rawOutput: { count: found.length } };
}

// ---- the tree both search --------------------------------------------------------------------

let f: Fixture;
const put = (p: string, body: string | Buffer) => {
  mkdirSync(dirname(join(f.dir, p)), { recursive: true });
  writeFileSync(join(f.dir, p), body);
};

beforeEach(() => {
  f = fixture();
  put("src/a.ts", "export const needle = 1;\nother\nNEEDLE again\r\n  export function load() {}\n");
  put("src/b.tsx", "import x from './a';\nexport default () => needle;\n");
  put("src/deep/c.md", "# Needle\nsome docs with a needle and a NeEdLe\n");
  put("src/deep/deeper/d.go", "package main\nfunc needle() {}\n");
  put("src/node_modules/skip.ts", "needle\n");
  put("node_modules/x/index.js", "needle\n");
  put(".git/config", "needle\n");
  put("bin.dat", Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2])]));
  put("latin.txt", Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0xe9, 0x0a]));
  put("bom.txt", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("needle with a BOM\n")]));
  put("huge.txt", `needle\n${"x".repeat(2 * 1024 * 1024)}`);
  put("long.txt", `${"needle ".repeat(100)}\n`);
  put("many.txt", Array.from({ length: 250 }, (_, i) => `needle ${i}`).join("\n"));
  put("a b/space name.ts", "needle in a spaced path\n");
  put("[x]/y.ts", "brackets\n");
  put("outside-link-target/t.ts", "needle through a link\n");
  symlinkSync(join(f.dir, "src/a.ts"), join(f.dir, "link-to-a.ts"));
  symlinkSync(join(f.dir, "src"), join(f.dir, "link-to-src"));
  symlinkSync(join(f.dir, "missing"), join(f.dir, "dangling.ts"));
  put("locked/secret.ts", "needle\n");
  chmodSync(join(f.dir, "locked"), 0o000);
});
afterEach(() => {
  chmodSync(join(f.dir, "locked"), 0o755);
  f.cleanup();
});

test("grep on the search thread answers what the in-loop grep answered", async () => {
  const cases = [
    { pattern: "needle" },
    { pattern: "needle", ignoreCase: true },
    { pattern: "^\\s*export\\s+(const|function)" },
    { pattern: "needle", glob: "*.ts" },
    { pattern: "needle", glob: "src/**/*.{md,go}" },
    { pattern: "needle", glob: "**/*.ts", path: "src" },
    { pattern: "^other$", path: "src/a.ts" },
    { pattern: "needle", maxResults: 1 },
    { pattern: "needle", maxResults: 7 },
    { pattern: "needle \\d+$", path: "many.txt" },
    { pattern: "é|BOM" },
    { pattern: "\\r$" },
    { pattern: "nothing matches this" },
    { pattern: "needle", path: "link-to-src" },
  ];
  for (const a of cases) {
    const now = await call(grepTool, a, f.ctx);
    const before = await oldGrep(f.dir, a);
    assert.equal(now.output, before.output, JSON.stringify(a));
    assert.deepEqual(now.rawOutput, before.rawOutput, JSON.stringify(a));
  }
});

test("glob on the search thread answers what the in-loop glob answered", async () => {
  for (let i = 0; i < 1100; i++) put(`gen/f${i}.txt`, "");
  const cases = [
    { pattern: "**/*.ts" },
    { pattern: "*.ts" },
    { pattern: "**" },
    { pattern: "src/**" },
    { pattern: "src/*.{ts,tsx}" },
    { pattern: "**/?.md" },
    { pattern: "**/deep/**/*.go" },
    { pattern: "**/*.ts", path: "src" },
    { pattern: "gen/*.txt" },
    { pattern: "a b/*" },
    { pattern: "\\[x\\]/*.ts" },
    { pattern: "**/*.py" },
    { pattern: "link-to-src/*.ts" },
  ];
  for (const a of cases) {
    const now = await call(globTool, a, f.ctx);
    const before = await oldGlob(f.dir, a);
    assert.equal(now.output, before.output, JSON.stringify(a));
    assert.deepEqual(now.rawOutput, before.rawOutput, JSON.stringify(a));
  }
});
