// How test/run.js shares the test files out between test processes. A test process pays about a
// second of CPU before its first end-to-end test has run (loading its bundle, then the first daemon,
// model server and client warming up), against some 60 ms for each test after that, so one process
// per file spent about half of the suite's CPU on start-up. Files are packed into a few batches
// instead; a batch is one process that runs its files one after another, each file as a suite of its
// own (`describe(<path>, () => import(<file>))`), so a file's hooks (`beforeEach`, `after`) keep to
// its own tests.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Seconds each file took inside runs of the whole suite (2-core machine, December 2026, the mean of
 * five runs each: with both connectors, six batches at once, and with the in-process one only, four
 * at once): only a weight for sharing files out evenly, never an assertion. A file not named here
 * weighs what most of its kind did.
 */
export const SECONDS = {
  "test/e2e/durable": [62.2, 10.6],
  "test/e2e/tools-editor": [44.7, 6.3],
  "test/e2e/crash-matrix": [36.5, 0.0],
  "test/e2e/daemon-trust": [34.2, 0.0],
  "test/e2e/extensions": [29.9, 4.8],
  "test/e2e/tools-permissions": [28.0, 2.5],
  "test/e2e/bounded-work": [27.7, 0.5],
  "test/e2e/daemon-life": [25.1, 0.2],
  "daemon/tools/builtin/search-thread": [18.4, 5.2],
  "test/e2e/conformance-capabilities": [18.2, 1.9],
  "test/e2e/controls": [16.6, 1.5],
  "daemon/tools/builtin/edit-match": [16.4, 6.3],
  "test/e2e/conformance": [15.8, 1.6],
  "test/support/harness": [15.8, 10.0],
  "test/e2e/security-sandbox": [15.8, 9.4],
  "test/structure/structure": [12.2, 5.4],
  "test/e2e/tools-jobs": [11.6, 1.1],
  "test/e2e/editor-faults": [11.3, 6.9],
  "test/e2e/mcp-interaction": [11.1, 5.7],
  "test/e2e/tools-task": [11.0, 1.4],
  "test/e2e/prompt": [10.7, 1.4],
  "test/e2e/fuzz": [10.4, 0.0],
  "test/e2e/jsonrpc-errors": [10.4, 2.0],
  "test/e2e/daemon-config": [9.9, 8.5],
  "test/e2e/retention": [9.1, 5.3],
  "test/e2e/load": [8.2, 0.0],
  "test/e2e/tools-modes": [7.9, 0.7],
  "test/e2e/chat": [7.8, 5.3],
  "test/e2e/tools-web": [7.6, 1.0],
  "daemon/tools/builtin/search-job": [7.3, 7.1],
  "test/e2e/provider-faults": [6.8, 3.6],
  "test/e2e/setup": [6.5, 3.7],
  "test/e2e/store-faults": [5.7, 4.0],
  "test/e2e/hooks": [5.4, 3.2],
  "daemon/store/store": [5.4, 3.6],
  "test/e2e/mcp-lifecycle": [5.1, 2.3],
  "test/e2e/tools-isolation": [4.7, 0.2],
  "test/e2e/tools-loop": [4.7, 0.7],
  "test/e2e/provider-bounds": [4.6, 2.2],
  "test/e2e/mcp": [4.2, 2.8],
  "daemon/tools/builtin/grep": [4.2, 3.0],
  "test/e2e/detached-turns": [4.2, 2.4],
  "test/e2e/fork": [3.5, 2.4],
  "test/e2e/compaction": [3.3, 1.8],
  "daemon/tools/local-commands": [2.9, 2.8],
  "shim/acp": [2.9, 2.6],
  "test/e2e/tools-edits": [2.8, 0.7],
  "test/e2e/keyspace": [2.8, 0.2],
  "test/e2e/operator": [2.4, 0.4],
  "test/e2e/checkpoints": [2.3, 1.9],
  "daemon/tools/builtin/glob": [2.2, 2.5],
  "test/support/fuzz-messages": [2.0, 1.9],
  "daemon/plugins/actions": [1.9, 1.5],
  "test/e2e/security-reads": [1.8, 1.4],
  "test/e2e/session-isolation": [1.8, 1.2],
  "test/support/in-process": [1.7, 1.8],
  "shim/ws-client": [1.7, 1.6],
  "test/e2e/security-writes": [1.6, 1.7],
  "test/support/scripted-model": [1.6, 1.6],
};

/** Files that run in a process of their own: they measure the test process itself (its heap). */
export const ALONE = ["test/e2e/resource-limits"];

/** `rel` is a file's path under dist/ with "/" separators, e.g. "test/e2e/prompt.test.js". */
export function weight(rel, fast) {
  const name = rel.replace(/\.test\.js$/, "");
  const known = SECONDS[name];
  if (known) return known[fast ? 1 : 0];
  if (name.startsWith("test/")) return fast ? 1.5 : 4;
  return fast ? 0.1 : 0.12;
}

/**
 * Shares `files` (each `{ rel, run }`: its path under dist/ and the module to import) out into
 * `slots` batches of about equal weight, heaviest file first (longest-processing-time first), one
 * batch for each file that runs at once. ALONE files run first, each in a process of its own, and
 * count towards the batch that starts after them (the last one returned).
 */
export function pack(files, slots, fast) {
  const alone = [];
  const shared = [];
  for (const f of files) (ALONE.some((a) => f.rel.startsWith(`${a}.`)) ? alone : shared).push({ ...f, weight: weight(f.rel, fast) });
  const bins = Array.from({ length: Math.max(1, Math.min(slots, shared.length)) }, () => ({ weight: 0, files: [] }));
  bins[0].weight = alone.reduce((sum, f) => sum + f.weight, 0);
  for (const f of shared.sort((a, b) => b.weight - a.weight || (a.rel < b.rel ? -1 : 1))) {
    const lightest = bins.reduce((min, b) => (b.weight < min.weight ? b : min));
    lightest.files.push(f);
    lightest.weight += f.weight;
  }
  return [...alone.map((f) => ({ weight: f.weight, files: [f] })), ...bins.slice(1), bins[0]].filter((b) => b.files.length > 0);
}

/**
 * Writes one entry module per batch of more than one file into `dir` and returns what to run: a
 * lone file runs as itself. The suites are named by the file's path under dist/, so a failure
 * names its file.
 */
export function writeBatches(batches, dir) {
  return batches.map((batch, i) => {
    if (batch.files.length === 1) return batch.files[0].run;
    const entry = join(dir, `batch-${i + 1}.test.js`);
    const lines = ['import { describe } from "node:test";'];
    for (const f of batch.files) {
      lines.push(`describe(${JSON.stringify(f.rel)}, async () => { await import(${JSON.stringify(pathToFileURL(f.run).href)}); });`);
    }
    writeFileSync(entry, `${lines.join("\n")}\n`);
    return entry;
  });
}
