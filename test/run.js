#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js: unit tests beside the code in shared/ and
// daemon/, end-to-end tests in test/) with node:test. Node 20 has no glob support for --test, so
// the files are found here. Usage: node test/run.js [--fast] [filter ...]
// A file runs when its path under dist/ contains any filter (e.g. `node test/run.js e2e`).
// --fast (`npm run test:fast`, the inner loop): unit and in-process tests only. The end-to-end tests
// are registered for the in-process connector alone (REASONIX_TEST_CONNECTORS, e2e/fixture.ts) and
// the soak files are left out.
// Output: the spec reporter live on stdout, then one line "N passed, N failed[, N skipped]" taken
// from a TAP copy of the same run. Exit status is non-zero on any failure or when nothing ran.
// Each file runs bundled (scripts/bundle-tests.js; REASONIX_TEST_BUNDLE=0 runs the files tsc wrote).
// REASONIX_TEST_TIMEOUT_MS overrides the per-test timeout (default 5 minutes); REASONIX_TEST_CONCURRENCY
// the number of files run at once (default twice the cores: most of a test's time is spent waiting on
// processes, sockets and timers, and two at a time left a 2-core machine 40 % idle).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleTests } from "../scripts/bundle-tests.js";
import { SOAK_FILES } from "./soak-files.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const testDir = join(root, "dist");
const fast = process.argv.includes("--fast");
/** Where the bundled test files go (dist/test/.bundle: inside dist/test, which npm pack leaves out). */
const BUNDLE_DIR = ".bundle";
const filters = process.argv.slice(2).filter((a) => a !== "--fast");

function findTests(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const found = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== BUNDLE_DIR) found.push(...findTests(path));
    } else if (entry.isFile() && entry.name.endsWith(".test.js")) found.push(path);
  }
  return found;
}

try {
  statSync(testDir);
} catch {
  process.stderr.write(`no ${relative(process.cwd(), testDir) || testDir}: run \`npm run build\` first\n`);
  process.stdout.write("0 passed, 0 failed\n");
  process.exit(1);
}

function isEndToEnd(file) {
  return relative(testDir, file).split(sep)[0] === "test";
}

/**
 * The files that took longest in a run of the whole suite (2-core machine, December 2026: 15–40 s
 * each, against 1–10 s for most), longest first. Only an order: a file missing here runs anyway.
 */
const LONGEST = [
  "e2e/durable",
  "e2e/tools-editor",
  "e2e/bounded-work",
  "e2e/crash-matrix",
  "e2e/tools-permissions",
  "e2e/daemon-trust",
  "e2e/extensions",
  "e2e/daemon-life",
  "e2e/controls",
  "e2e/conformance-capabilities",
  "e2e/conformance.",
  "support/harness",
  "e2e/security-sandbox",
  "e2e/tools-jobs",
];

function rank(file) {
  const rel = relative(testDir, file).split(sep).join("/");
  const i = LONGEST.findIndex((f) => rel.includes(f));
  return i >= 0 ? i : LONGEST.length + (isEndToEnd(file) ? 0 : 1);
}

const files = findTests(testDir)
  .filter((file) => {
    const rel = relative(testDir, file).split(sep).join("/");
    if (fast && SOAK_FILES.some((f) => rel.includes(f))) return false;
    if (filters.length === 0) return true;
    return filters.some((f) => rel.includes(f));
  })
  // The longest files first, then the other end-to-end files, then the unit files: the short ones
  // fill in around the long ones instead of one long file running alone at the end.
  .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));

if (files.length === 0) {
  process.stderr.write(`no test files under dist/${filters.length ? ` match ${filters.join(", ")}` : ""}\n`);
  process.stdout.write("0 passed, 0 failed\n");
  process.exit(1);
}

// REASONIX_TEST_BUNDLE=0 runs the files tsc wrote, one module at a time (stack traces name them).
const run = process.env.REASONIX_TEST_BUNDLE === "0" ? files : [...(await bundleTests(files, testDir, join(testDir, "test", BUNDLE_DIR))).values()];

const tapDir = mkdtempSync(join(tmpdir(), "reasonix-tap-"));
const tapFile = join(tapDir, "report.tap");

const child = spawn(
  process.execPath,
  [
    "--test",
    `--test-concurrency=${process.env.REASONIX_TEST_CONCURRENCY || 2 * availableParallelism()}`,
    // A safety net, not an assertion on time: a wedged agent must not hang CI forever.
    `--test-timeout=${process.env.REASONIX_TEST_TIMEOUT_MS || 300000}`,
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tapFile}`,
    ...run,
  ],
  { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: fast ? { ...process.env, REASONIX_TEST_CONNECTORS: "in-process" } : process.env },
);

// Ctrl-C reaches the test runner through the process group; the wrapper just waits for its summary.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));

child.on("exit", (code, signal) => {
  let tap = "";
  try {
    tap = readFileSync(tapFile, "utf8");
  } catch {
    // the runner died before writing anything; handled below
  }
  rmSync(tapDir, { recursive: true, force: true });

  // The run-level summary is the last "# name N" block at column 0 (nested suites indent theirs).
  const count = (name) => {
    const matches = [...tap.matchAll(new RegExp(`^# ${name} (\\d+)$`, "gm"))];
    return matches.length ? Number(matches[matches.length - 1][1]) : 0;
  };
  const passed = count("pass");
  const failed = count("fail") + count("cancelled");
  const skipped = count("skipped") + count("todo");

  let line = `${passed} passed, ${failed} failed`;
  if (skipped > 0) line += `, ${skipped} skipped`;

  // Diagnostics first, so the summary stays the very last line of the output.
  let status = 0;
  if (signal) {
    process.stderr.write(`test runner was killed by ${signal}\n`);
    status = 1;
  } else if (failed > 0 || code !== 0) {
    status = code || 1;
  } else if (passed === 0) {
    // All-skipped counts as nothing verified.
    process.stderr.write("no tests ran\n");
    status = 1;
  }
  process.stdout.write(`\n${line}\n`);
  process.exit(status);
});
