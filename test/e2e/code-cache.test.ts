import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, REPO_ROOT } from "../support/harness.js";

interface Loaded {
  exports: { name: string; self: boolean; dir: string; later(): Promise<string> };
  cache: "used" | "rejected" | "none";
  saveCache(): void;
}
const { loadCached } = createRequire(import.meta.url)(join(REPO_ROOT, "bin", "code-cache.js")) as { loadCached(file: string): Loaded };

const MODULE = `const { basename } = require("node:path");
exports.name = basename(__filename);
exports.dir = __dirname;
exports.self = module.exports === exports;
exports.later = () => Promise.resolve().then(() => typeof require("node:os").cpus);
`;

test("a bundle runs the same from source and from its code cache; a cache that does not fit is replaced", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-cc-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "m.cjs");
  writeFileSync(file, MODULE);

  const first = loadCached(file);
  assert.equal(first.cache, "none");
  assert.deepEqual([first.exports.name, first.exports.dir, first.exports.self], ["m.cjs", dir, true]);
  // A require() run after the load still resolves as the file's own would.
  assert.equal(await first.exports.later(), "function");
  first.saveCache();
  assert.ok(existsSync(`${file}.cache`));

  const second = loadCached(file);
  assert.equal(second.cache, "used");
  assert.deepEqual([second.exports.name, second.exports.self], ["m.cjs", true]);
  assert.equal(await second.exports.later(), "function");

  // Another source (an upgrade) or a damaged file: V8 refuses the cache, the module still runs.
  writeFileSync(file, `${MODULE}exports.extra = 1;\n`);
  const third = loadCached(file);
  assert.equal(third.cache, "rejected");
  assert.equal((third.exports as unknown as { extra: number }).extra, 1);
  third.saveCache();
  assert.equal(loadCached(file).cache, "used");
  // The same length, other code: V8 alone would take the old cache (it compares lengths) and run
  // the old code; the cache names the file it was made from.
  const sameLength = join(dir, "same.cjs");
  writeFileSync(sameLength, "exports.v = 1;\n");
  loadCached(sameLength).saveCache();
  // Replaced as installs do: a new file put in its place.
  writeFileSync(`${sameLength}.new`, "exports.v = 2;\n");
  renameSync(`${sameLength}.new`, sameLength);
  const replaced = loadCached(sameLength);
  assert.equal(replaced.cache, "rejected");
  assert.equal((replaced.exports as unknown as { v: number }).v, 2);

  // (A new text each time: V8 keeps what this process compiled, and would not look at the cache.)
  writeFileSync(file, `${MODULE}exports.extra = 2;\n`);
  writeFileSync(`${file}.cache`, "not a cache");
  const fourth = loadCached(file);
  assert.equal(fourth.cache, "rejected");
  assert.equal((fourth.exports as unknown as { extra: number }).extra, 2);
});

test("the bundles are ASCII (V8 holds their text at one byte a character) and have no import()", () => {
  for (const name of ["daemon-run.cjs", "shim-acp.cjs"]) {
    const bytes = readFileSync(join(REPO_ROOT, "dist", name));
    assert.equal(
      bytes.findIndex((b) => b > 0x7f),
      -1,
      name,
    );
  }
  // Both run through the code cache, where Node 20 cannot serve an import() after a collection.
  for (const name of ["daemon-run.cjs", "shim-acp.cjs"]) assert.doesNotMatch(readFileSync(join(REPO_ROOT, "dist", name), "latin1"), /\bimport\(/, name);
});

test("reasonix acp writes its code cache as its window ends, naming the bundle it ran", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-cc-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bundle = join(REPO_ROOT, "dist", "shim-acp.cjs");
  rmSync(`${bundle}.cache`, { force: true });
  // A home that is a file: the window ends at once (no daemon can be had), through the usual exit.
  const home = join(dir, "home");
  writeFileSync(home, "");
  const ran = spawnSync(process.execPath, [BIN, "acp"], { env: { ...process.env, REASONIX_HOME: home }, input: "", encoding: "utf8" });
  assert.equal(ran.status, 1, ran.stderr);
  const { ino, size, mtimeMs } = statSync(bundle);
  const cache = readFileSync(`${bundle}.cache`);
  assert.ok(cache.toString("latin1").startsWith(`reasonix-code-cache ${ino} ${size} ${mtimeMs}\n`));
});
