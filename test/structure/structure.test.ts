/**
 * The shape of the code, checked on every run: no import circles between modules (type-only ones
 * included) or between folders, and no production file grown past what a reader takes in at once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../support/harness.js";
import { cycles, folderGraph, importGraph, sourceFiles } from "./import-graph.js";

test("no import circles between modules, type-only imports included", () => {
  assert.deepEqual(cycles(importGraph(REPO_ROOT)), []);
});

test("no folder imports a folder that imports it back", () => {
  assert.deepEqual(cycles(folderGraph(importGraph(REPO_ROOT))), []);
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
  assert.deepEqual(
    files.filter((f) => /(^|\/)test\/|\.test\.|fixture/.test(f)),
    [],
  );
});
