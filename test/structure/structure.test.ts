/**
 * The shape of the code, checked on every run: no import circles between modules (type-only ones
 * included) or between folders, and no production file grown past what a reader takes in at once.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { REPO_ROOT } from "../support/harness.js";
import { cycles, folderGraph, importGraph, sourceFiles } from "./import-graph.js";
import { recordWrites } from "./record-writes.js";
import { functionLengths } from "./function-lengths.js";
import { statedImports, unnamedFiles } from "./readmes.js";
import { closeProjects } from "./ts-project.js";

after(closeProjects);

test("no import circles between modules, type-only imports included", () => {
  assert.deepEqual(cycles(importGraph(REPO_ROOT)), []);
});

test("no folder imports a folder that imports it back", () => {
  assert.deepEqual(cycles(folderGraph(importGraph(REPO_ROOT))), []);
});

test("acp/ reaches the sessions only through sessions/index.ts, never the session's parts", () => {
  // windows/, ledger/ and records/ are the session's parts: a window's side meets them through the session's verbs.
  const parts = ["daemon/sessions/", "daemon/windows/", "daemon/ledger/", "daemon/records/"];
  const reached = [...importGraph(REPO_ROOT)]
    .filter(([from]) => from.startsWith("daemon/acp/"))
    .flatMap(([from, deps]) => deps.filter((to) => parts.some((p) => to.startsWith(p)) && to !== "daemon/sessions/index.ts").map((to) => `${from} -> ${to}`));
  assert.deepEqual(reached, []);
});

test("a session record changes only in sessions/session-state.ts (read with the TypeScript checker)", () => {
  const files = sourceFiles(REPO_ROOT);
  const writes = recordWrites(REPO_ROOT, files);
  const own = "daemon/sessions/session-state.ts";
  assert.deepEqual(
    writes.filter((w) => w.file !== own),
    [],
  );
  // The check sees what it looks for: SessionState's own writes are found (status, title, usage, …).
  const fields = new Set(writes.filter((w) => w.file === own).map((w) => /\.(\w+)\s*(?:=|\?\?=)/.exec(w.code)?.[1]));
  for (const field of ["status", "title", "usage", "goal", "compaction", "environment"])
    assert.ok(fields.has(field), `SessionState's write of ${field} is found`);
});

test("no production file over 400 lines; the session itself under 300", () => {
  const long = sourceFiles(REPO_ROOT)
    .map((file) => ({ file: file.slice(REPO_ROOT.length), lines: readFileSync(file, "utf8").split("\n").length }))
    .filter(({ file, lines }) => lines > (file.endsWith(join("sessions", "session.ts")) ? 300 : 400));
  assert.deepEqual(long, []);
});

test("what npm pack ships holds no test file and no test helper", () => {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "ignore"] }).toString();
  const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
  assert.ok(files.includes("dist/shim-acp.cjs") && files.includes("bin/reasonix.js"), "the package holds the program");
  // The daemon's bundle requires the SDKs' own bundles by relative path on first use: they ship too.
  const vendored = [...readFileSync(join(REPO_ROOT, "dist", "daemon-run.cjs"), "utf8").matchAll(/require\("\.\/(vendor\/[\w.-]+)"\)/g)].map(
    (m) => `dist/${m[1]}`,
  );
  assert.deepEqual(vendored.sort(), ["dist/vendor/mcp-sdk.cjs", "dist/vendor/openai.cjs"]);
  assert.deepEqual(
    vendored.filter((f) => !files.includes(f)),
    [],
    "every bundle the daemon's bundle requires is in the package",
  );
  assert.deepEqual(
    files.filter((f) => /(^|\/)test\/|\.test\.|fixture/.test(f)),
    [],
  );
});

test("no production function or closure over 100 lines, counted from the syntax tree", () => {
  const long = functionLengths(REPO_ROOT, sourceFiles(REPO_ROOT))
    .filter((f) => f.lines > 100)
    .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
  assert.deepEqual(long, []);
});

test("every production file is named in its folder's README", () => {
  const folders = [...new Set(sourceFiles(REPO_ROOT).map((f) => dirname(relative(REPO_ROOT, f)).split(sep).join("/")))];
  assert.deepEqual(unnamedFiles(REPO_ROOT, folders), []);
});

test("each folder README's `Folders imported:` line is what the import graph says", () => {
  const wrong: string[] = [];
  for (const [folder, imports] of folderGraph(importGraph(REPO_ROOT))) {
    const stated = statedImports(REPO_ROOT, folder);
    const actual = [...imports].sort();
    if (stated === undefined) wrong.push(`${folder}: its README has no "Folders imported:" line`);
    else if (stated.join(" ") !== actual.join(" "))
      wrong.push(`${folder}: README says ${stated.join(", ") || "none"}; the code imports ${actual.join(", ") || "none"}`);
  }
  assert.deepEqual(wrong, []);
});
