/**
 * `npm run build`: dist/ from the TypeScript sources. tsc type-checks and writes one .js per .ts;
 * then scripts/bundle.js makes the two start-up bundles, scripts/acp-validators.js the tests' wire
 * validators, and dist/build.json names this build (a shim meeting a daemon of another build asks
 * it to step down).
 *
 * `--no-check` (`npm run test:fast`, the inner loop) writes the same files with esbuild instead of
 * tsc, without type-checking: 0.5 s against 5 s on the 2-core machine. `npm test` and CI always
 * type-check.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const check = !process.argv.includes("--no-check");

/** A package's command, as its package.json names it (run with this node, as npm's shims would). */
function bin(pkg, name) {
  const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  return join(dirname(manifest), JSON.parse(readFileSync(manifest, "utf8")).bin[name]);
}

/** What biome.json's `files.includes` covers. */
const LINTED = ["shared", "shim", "daemon", "test", "bin", "scripts"];

/** The sources tsconfig.json includes: every .ts under these folders. */
const SOURCE_FOLDERS = ["shared", "shim", "daemon", "test"];

function sources(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) found.push(path);
  }
  return found;
}

function node(args) {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Runs node scripts side by side (each reads dist/ and writes its own files); exits on the first failure. */
async function nodeAll(scripts) {
  const codes = await Promise.all(
    scripts.map((script) => new Promise((resolve) => spawn(process.execPath, [script], { cwd: ROOT, stdio: "inherit" }).on("close", resolve))),
  );
  const failed = codes.find((code) => code !== 0);
  if (failed !== undefined) process.exit(failed ?? 1);
}

rmSync(DIST, { recursive: true, force: true });
// `--lint` (`npm test`): biome checks the sources on the other core while tsc runs; named folders
// only, so it never walks dist/ as it is written.
const lint = process.argv.includes("--lint")
  ? spawn(process.execPath, [bin("@biomejs/biome", "biome"), "check", ...LINTED], { cwd: ROOT, stdio: "inherit" })
  : undefined;
const linted = lint && new Promise((resolve) => lint.on("close", (code) => resolve(code)));
if (check) {
  node([bin("typescript", "tsc"), "-p", "tsconfig.json"]);
} else {
  await build({
    entryPoints: SOURCE_FOLDERS.flatMap((folder) => sources(join(ROOT, folder))),
    outdir: DIST,
    outbase: ROOT,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
    tsconfig: join(ROOT, "tsconfig.json"),
  });
}
// The start-up bundles and the tests' wire validators: both read dist/ and write files of their own.
await nodeAll([join(ROOT, "scripts", "bundle.js"), join(ROOT, "scripts", "acp-validators.js")]);
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
writeFileSync(join(DIST, "build.json"), JSON.stringify({ build: `${version}+${Date.now().toString(36)}${randomBytes(3).toString("hex")}` }));
if (linted && (await linted) !== 0) {
  process.stderr.write("biome check failed (above)\n");
  process.exit(1);
}
