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
 * Seconds each file took inside runs of the whole suite (2-core machine, December 2026: with both
 * connectors, six batches at once, and with the in-process one only, four at once; the mean of two
 * and three runs of the suite as it stood on the 2nd): only a weight for sharing files out evenly,
 * never an assertion. A file not named here (under half a second either way) weighs what most of
 * its kind did.
 */
export const SECONDS = {
  // Runs alone (ALONE below): its tests' time plus a process start; the batch after it waits for it.
  "test/e2e/resource-limits": [5.7, 5.7],
  "test/e2e/durable": [58.0, 10.1],
  "test/e2e/tools-editor": [42.5, 5.8],
  "test/e2e/crash-matrix": [32.7, 0.0],
  "test/e2e/daemon-trust": [31.8, 0.0],
  "test/e2e/extensions": [28.4, 4.9],
  "test/e2e/tools-permissions": [27.9, 2.7],
  "test/e2e/daemon-life": [24.0, 0.1],
  "test/e2e/bounded-work": [22.6, 0.4],
  "test/e2e/conformance-capabilities": [17.4, 1.2],
  "daemon/tools/builtin/search-thread": [16.8, 6.1],
  "test/support/harness": [16.5, 0.0],
  "test/structure/structure": [13.9, 6.9],
  "test/e2e/jsonrpc-errors": [12.8, 1.5],
  "test/e2e/editor-faults": [12.3, 7.5],
  "test/e2e/controls": [12.2, 1.5],
  "test/e2e/conformance": [11.7, 1.4],
  "test/e2e/tools-task": [11.5, 1.6],
  "test/e2e/mcp-interaction": [11.4, 6.4],
  "test/e2e/fuzz": [11.0, 0.0],
  "test/e2e/daemon-config": [10.5, 7.7],
  "test/e2e/prompt": [9.8, 1.7],
  "test/e2e/tools-jobs": [9.8, 0.7],
  "test/e2e/retention": [9.2, 4.9],
  "test/e2e/setup": [8.7, 3.8],
  "test/e2e/chat": [8.4, 5.2],
  "test/e2e/security-sandbox": [8.1, 3.0],
  "test/e2e/load": [7.6, 0.0],
  "daemon/tools/builtin/edit-match": [7.1, 5.5],
  "test/e2e/tools-web": [7.0, 0.8],
  "test/e2e/provider-faults": [7.0, 4.4],
  "daemon/tools/builtin/search-job": [6.5, 1.4],
  "test/e2e/mcp-lifecycle": [6.0, 2.0],
  "test/e2e/tools-modes": [5.8, 0.8],
  "test/e2e/store-faults": [5.5, 2.8],
  "test/e2e/provider-bounds": [5.4, 1.7],
  "daemon/store/store": [4.9, 3.6],
  "test/e2e/tools-isolation": [4.0, 0.3],
  "test/e2e/hooks": [3.9, 2.2],
  "test/e2e/tools-loop": [3.9, 0.4],
  "test/e2e/mcp": [3.9, 3.1],
  "daemon/tools/builtin/glob": [3.6, 1.6],
  "test/e2e/detached-turns": [3.3, 2.2],
  "test/e2e/fork": [3.3, 2.3],
  "test/support/in-process": [3.1, 1.3],
  "daemon/tools/local-commands": [2.9, 2.8],
  "shim/acp": [2.8, 2.6],
  "test/e2e/checkpoints": [2.6, 1.5],
  "test/e2e/keyspace": [2.6, 0.2],
  "test/e2e/compaction": [2.4, 2.0],
  "test/support/fuzz-messages": [2.4, 1.2],
  "daemon/tools/lifeline": [2.4, 2.0],
  "test/e2e/tools-edits": [2.3, 0.4],
  "test/e2e/systemd": [2.2, 0.1],
  "test/e2e/security-writes": [2.2, 1.2],
  "shim/ws-client": [2.1, 0.9],
  "test/e2e/operator": [2.1, 0.3],
  "test/e2e/session-isolation": [2.1, 1.2],
  "test/support/scripted-model": [2.0, 1.3],
  "daemon/plugins/actions": [1.8, 1.4],
  "daemon/tools/sandbox": [1.8, 1.1],
  "daemon/tools/builtin/grep": [1.7, 2.2],
  "test/e2e/security-reads": [1.3, 0.5],
  "daemon/ledger/ledger-join": [1.1, 0.7],
  "daemon/records/checkpoints": [1.1, 0.4],
  "test/support/acp-schema": [0.9, 0.9],
  "daemon/tools/pinned-folder": [0.9, 0.7],
  "daemon/sessions/manager": [0.9, 0.7],
  "daemon/hooks/process": [0.9, 0.6],
  "daemon/agent/skills": [0.8, 0.6],
  "test/e2e/message-ids": [0.8, 0.6],
  "daemon/tools/builtin/run-command": [0.8, 0.7],
  "test/e2e/skills": [0.7, 0.8],
  "test/e2e/instructions": [0.7, 0.5],
  "daemon/tools/page-text": [0.7, 0.7],
  "shim/detach": [0.7, 0.5],
  "test/e2e/acp-websocket": [0.5, 0.2],
  "daemon/tools/builtin/read-file": [0.5, 0.7],
  "daemon/log/log": [0.5, 0.5],
  "daemon/windows/attachments": [0.0, 0.9],
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
