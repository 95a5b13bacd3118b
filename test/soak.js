#!/usr/bin/env node
// The long run of the hardening tests (`npm run soak`): the same three end-to-end files the suite
// runs, with the bounds raised — 10,000 fuzzed protocol inputs, three rounds of the crash matrix
// with five repeats of its cheap points each (66 kills of the daemon), a minute of 20 shims x 3
// sessions under load. Each prints its seed and figures; set REASONIX_FUZZ_SEED /
// REASONIX_CRASH_SEED to replay a run, or any of the variables below to change a bound. Usage: npm run build && node test/soak.js
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SOAK_FILES } from "./soak-files.js";

const here = dirname(fileURLToPath(import.meta.url));
const defaults = {
  REASONIX_FUZZ_RUNS: "10000",
  REASONIX_CRASH_ROUNDS: "3",
  REASONIX_CRASH_EXTRA: "5",
  REASONIX_LOAD_SECONDS: "60",
  // The heap settles near 300-360 MiB over thousands of multi-megabyte lines; the run checks it stops climbing.
  REASONIX_FUZZ_RSS_LIMIT_MIB: "512",
  REASONIX_TEST_TIMEOUT_MS: "3600000",
};
const env = { ...process.env };
for (const [name, value] of Object.entries(defaults)) env[name] ??= value;
const child = spawn(process.execPath, [join(here, "run.js"), ...SOAK_FILES], { stdio: "inherit", env });
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
