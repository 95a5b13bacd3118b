#!/usr/bin/env node
// Runs every compiled test file (dist/**/*.test.js: unit tests beside the code in shared/ and
// daemon/, end-to-end tests in test/) with node:test. Node 20 has no glob support for --test, so
// the files are found here. Usage: node test/run.js [--fast] [filter ...]
// A file runs when its path under dist/ contains any filter (e.g. `node test/run.js e2e`).
// --fast (`npm run test:fast`, the inner loop): unit and in-process tests only. The end-to-end tests
// are registered for the in-process connector alone (REASONIX_TEST_CONNECTORS, e2e/fixture.ts);
// the soak files and the process harness's own tests are left out.
// Output: the spec reporter live on stdout, then one line "N passed, N failed[, N skipped]" taken
// from a TAP copy of the same run. Exit status is non-zero on any failure or when nothing ran.
// Each file runs bundled (scripts/bundle-tests.js; REASONIX_TEST_BUNDLE=0 runs the files tsc wrote),
// and files share test processes in batches (test/batches.js), one batch per slot.
// REASONIX_TEST_TIMEOUT_MS overrides the per-test timeout (default 15 minutes); REASONIX_TEST_CONCURRENCY
// the number of batches run at once (default three per core, two with --fast: the end-to-end tests
// through processes spend most of their time waiting on processes, sockets and timers, while the
// in-process ones keep their cores busy).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleTests } from "../scripts/bundle-tests.js";
import { pack, writeBatches } from "./batches.js";
import { SOAK_FILES } from "./soak-files.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const testDir = join(root, "dist");
const fast = process.argv.includes("--fast");
/** Where the bundled test files go (dist/test/.bundle: inside dist/test, which npm pack leaves out). */
const BUNDLE_DIR = ".bundle";
const filters = process.argv.slice(2).filter((a) => a !== "--fast");
/**
 * Files whose every test is about processes, left out of --fast as the process connector is: the
 * harness's own tests spawn `reasonix acp` and daemons (about 5 s of CPU, a tenth of the fast run).
 */
const PROCESS_FILES = ["test/support/harness.test"];
const leftOut = fast ? [...SOAK_FILES, ...PROCESS_FILES] : [];

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

const files = findTests(testDir)
  .filter((file) => {
    const rel = relative(testDir, file).split(sep).join("/");
    if (leftOut.some((f) => rel.includes(f))) return false;
    if (filters.length === 0) return true;
    return filters.some((f) => rel.includes(f));
  })
  .sort();

if (files.length === 0) {
  process.stderr.write(`no test files under dist/${filters.length ? ` match ${filters.join(", ")}` : ""}\n`);
  process.stdout.write("0 passed, 0 failed\n");
  process.exit(1);
}

const concurrency = Number(process.env.REASONIX_TEST_CONCURRENCY) || (fast ? 2 : 3) * availableParallelism();
const bundleDir = join(testDir, "test", BUNDLE_DIR);
// REASONIX_TEST_BUNDLE=0 runs the files tsc wrote, one module at a time (stack traces name them).
const modules = process.env.REASONIX_TEST_BUNDLE === "0" ? new Map(files.map((f) => [f, f])) : await bundleTests(files, testDir, bundleDir);
mkdirSync(bundleDir, { recursive: true });
// REASONIX_TEST_BATCHES sets how many batches share the files (default: as many as run at once; 0
// runs every file in a process of its own).
const batchCount = process.env.REASONIX_TEST_BATCHES === undefined ? concurrency : Number(process.env.REASONIX_TEST_BATCHES);
const run =
  batchCount === 0
    ? [...modules.values()]
    : writeBatches(
        pack(
          files.map((f) => ({ rel: relative(testDir, f).split(sep).join("/"), run: modules.get(f) })),
          batchCount,
          fast,
        ),
        bundleDir,
      );

const tapDir = mkdtempSync(join(tmpdir(), "reasonix-tap-"));
const tapFile = join(tapDir, "report.tap");

// No test reaches a server outside this machine, and NODE_EXTRA_CA_CERTS (set on these machines) makes
// every Node process parse a certificate bundle as it starts: ~80 ms of CPU in each of the suite's
// ~530 Node processes (shims, daemons, helpers), a sixth of the whole run's CPU. Tests that are
// about the variable set it themselves.
const { NODE_EXTRA_CA_CERTS: _certs, ...inherited } = process.env;
const child = spawn(
  process.execPath,
  [
    "--test",
    `--test-concurrency=${concurrency}`,
    // A safety net, not an assertion on time: a wedged agent must not hang CI forever. It bounds
    // each batch file as a whole too: two suites side by side on a 2-core VM where process starts
    // are dear took their batches past 5 minutes, so 15.
    `--test-timeout=${process.env.REASONIX_TEST_TIMEOUT_MS || 900000}`,
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tapFile}`,
    ...run,
  ],
  { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: fast ? { ...inherited, REASONIX_TEST_CONNECTORS: "in-process" } : inherited },
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
