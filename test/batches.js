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
 * Seconds each file took inside a run of the whole suite (2-core machine, December 2026; with both
 * connectors, six at once, and with the in-process one only, four at once): only a weight for
 * sharing files out evenly, never an assertion. A file not named here weighs what most of its kind
 * did.
 */
export const SECONDS = {
  "test/e2e/durable": [64.8, 9.0],
  "test/e2e/tools-editor": [44.6, 6.6],
  "test/e2e/crash-matrix": [39.2, 0.0],
  "test/e2e/daemon-trust": [35.3, 0.0],
  "test/e2e/extensions": [30.2, 4.3],
  "test/e2e/bounded-work": [29.5, 0.4],
  "test/e2e/tools-permissions": [29.3, 1.9],
  "test/e2e/daemon-life": [27.4, 0.2],
  "test/e2e/conformance-capabilities": [17.5, 1.4],
  "test/e2e/controls": [17.0, 1.7],
  "test/e2e/conformance": [16.2, 1.1],
  "test/e2e/security-sandbox": [15.5, 9.1],
  "test/support/harness": [15.5, 9.4],
  "test/e2e/mcp-interaction": [15.4, 3.7],
  "test/structure/structure": [15.0, 4.4],
  "daemon/tools/builtin/edit-match": [14.3, 6.3],
  "test/e2e/fuzz": [13.9, 0.0],
  "daemon/tools/builtin/search-job": [13.6, 3.3],
  "daemon/tools/builtin/search-thread": [13.4, 7.9],
  "test/e2e/tools-jobs": [12.5, 0.6],
  "test/e2e/prompt": [11.7, 1.1],
  "test/e2e/editor-faults": [11.6, 7.0],
  "test/e2e/jsonrpc-errors": [11.3, 1.8],
  "test/e2e/tools-task": [11.3, 1.5],
  "test/e2e/daemon-config": [11.2, 8.0],
  "test/e2e/retention": [9.6, 4.8],
  "test/e2e/chat": [8.8, 4.9],
  "test/e2e/load": [7.7, 0.0],
  "test/e2e/tools-web": [7.6, 0.7],
  "test/e2e/tools-modes": [7.4, 0.5],
  "test/e2e/provider-faults": [7.3, 3.1],
  "test/e2e/setup": [7.2, 3.2],
  "daemon/store/store": [6.4, 2.8],
  "test/e2e/store-faults": [6.2, 2.9],
  "test/e2e/hooks": [6.0, 2.2],
  "test/e2e/provider-bounds": [5.6, 1.8],
  "daemon/tools/builtin/grep": [5.4, 2.4],
  "test/e2e/mcp-lifecycle": [4.7, 1.9],
  "test/e2e/detached-turns": [4.6, 2.2],
  "test/e2e/tools-isolation": [4.4, 0.2],
  "test/e2e/tools-loop": [4.2, 0.3],
  "test/e2e/mcp": [4.0, 2.1],
  "test/e2e/fork": [3.8, 1.6],
  "test/e2e/tools-edits": [3.4, 0.4],
  "test/e2e/compaction": [3.4, 1.8],
  "shim/acp": [3.0, 2.5],
  "daemon/tools/local-commands": [2.9, 2.8],
  "test/e2e/keyspace": [2.5, 0.2],
  "test/e2e/operator": [2.4, 0.2],
  "test/e2e/session-isolation": [2.2, 1.0],
  "test/e2e/security-reads": [2.2, 0.6],
  "test/support/fuzz-messages": [2.2, 1.1],
  "daemon/tools/builtin/glob": [2.0, 1.8],
  "daemon/plugins/actions": [2.0, 1.7],
  "test/e2e/systemd": [1.7, 0.1],
  "test/support/in-process": [1.7, 1.6],
};

/** Files that run in a process of their own: they measure the test process itself (its heap). */
export const ALONE = ["test/e2e/resource-limits"];

/** `rel` is a file's path under dist/ with "/" separators, e.g. "test/e2e/prompt.test.js". */
export function weight(rel, fast) {
  const name = rel.replace(/\.test\.js$/, "");
  const known = SECONDS[name];
  if (known) return known[fast ? 1 : 0];
  if (name.startsWith("test/")) return fast ? 1 : 4;
  return fast ? 0.05 : 0.15;
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
