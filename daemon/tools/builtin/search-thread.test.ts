import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { busyBound } from "../../../test/support/busy.js";
import { call, fixture, type Fixture } from "../../../test/support/tool-fixture.js";
import { globTool } from "./glob.js";
import { grepTool } from "./grep.js";
import type { SearchRunner } from "../search-types.js";
import { overtime, SearchThreads, seconds } from "./search-thread.js";

let f: Fixture;
const put = (p: string, body: string | Buffer) => {
  mkdirSync(dirname(join(f.dir, p)), { recursive: true });
  writeFileSync(join(f.dir, p), body);
};
beforeEach(() => {
  f = fixture();
  put("ok.txt", "plain line\n");
  // (a+)+$ against a run of a's ended by "b" backtracks 2^n ways before it fails: 27 of them blocked
  // the old in-loop grep for 5.9 s; 40 would take days.
  put("evil.txt", `${"a".repeat(40)}b\n`);
});
afterEach(() => f.cleanup());

// The search thread runs at a low priority (nice 10): on a busy machine it can wait longer than 300 ms
// for a CPU, which reads as a stall (before the pattern started, even as one of reading files).
// These bounds are what the tests mean by "no progress", so they grow with the run queue.
const QUICK_MS = busyBound(300);

test("a pattern that stops making progress is stopped, its thread terminated, with a clear error for the model", async () => {
  let boundMs = QUICK_MS;
  const searches = new SearchThreads(() => boundMs);
  // The whole search's bound (60 s by default) is set out of the way: under two suites side by side
  // the thread, then at nice 19, once had too little CPU in 62 s to be judged stalled, and this is about stalls.
  const patient: SearchRunner = { run: (spec, opts) => searches.run(spec, { ...opts, totalMs: 600_000 }) };
  const ctx = { ...f.ctx, search: patient };
  const r = await call(grepTool, { pattern: "(a+)+$" }, ctx);
  assert.equal(r.failed, true);
  assert.ok(r.output.startsWith(`The pattern took longer than ${seconds(QUICK_MS)} s; simplify it`), r.output);
  assert.equal(searches.running, 0);
  // The bound is read at each search; the next one runs normally.
  boundMs = 10_000;
  assert.equal((await call(grepTool, { pattern: "plain" }, ctx)).output, "ok.txt:1: plain line");
});

test("a thread that answered serves the next search; one that was stopped is never used again", async (t) => {
  const searches = new SearchThreads(() => QUICK_MS);
  t.after(() => searches.close());
  const plain = { kind: "grep" as const, root: join(f.dir, "ok.txt"), cwd: f.dir, inside: [f.dir], source: "plain", flags: "", maxResults: 10 };
  const signal = new AbortController().signal;
  assert.equal(searches.keptThread, undefined);
  assert.equal((await searches.run(plain, { signal })).status, "done");
  const kept = searches.keptThread;
  assert.notEqual(kept, undefined, "the thread is kept once its search answered");
  for (let i = 0; i < 3; i++) {
    assert.equal((await searches.run(plain, { signal })).status, "done");
    assert.equal(searches.keptThread, kept, "the same thread served the next search");
  }
  const evil = { ...plain, root: join(f.dir, "evil.txt"), source: "(a+)+$" };
  assert.equal((await searches.run(evil, { signal, totalMs: 240_000 })).status, "stalled");
  assert.equal(searches.keptThread, undefined, "the stalled search ran on the kept thread, and it is not kept");
  assert.equal(searches.running, 0);
  assert.equal((await searches.run(plain, { signal })).status, "done");
  const next = searches.keptThread;
  assert.ok(next !== undefined && next !== kept, "a new thread for the next search");
  searches.close();
  assert.equal(searches.keptThread, undefined, "close ends the kept thread");
});

test("each SearchThreads keeps its own bound and count", async () => {
  const quick = new SearchThreads(() => QUICK_MS);
  const patient = new SearchThreads(() => 60_000);
  const stop = new AbortController();
  const evil = { kind: "grep" as const, root: join(f.dir, "evil.txt"), cwd: f.dir, inside: [f.dir], source: "(a+)+$", flags: "", maxResults: 10 };
  // Its deadline too is set out of the way: a starved quick search once took 141 s to be judged stalled.
  const slow = patient.run(evil, { signal: stop.signal, totalMs: 600_000 });
  assert.equal(patient.running, 1);
  // Starved (low priority, a loaded machine) it may wait long for its CPU: the whole-search
  // deadline is set out of the way, as it is not what this is about.
  const stalled = await quick.run(evil, { signal: new AbortController().signal, totalMs: 240_000 });
  assert.deepEqual(stalled, { status: "stalled", matching: true, boundMs: QUICK_MS });
  assert.equal(quick.running, 0);
  assert.equal(patient.running, 1, "the other's search still runs under its own bound");
  stop.abort();
  assert.deepEqual(await slow, { status: "cancelled" });
  assert.equal(patient.running, 0);
});

test("the stall bound is about progress: a slow search that keeps moving is not stopped by it", async () => {
  // Each line costs the pattern about a millisecond of backtracking and the file as a whole (0.8 s)
  // more than the bound on a quiet machine, so only a per-line view of progress lets it finish. The
  // bound stays far above a line's cost and grows with the run queue: the thread runs at a low
  // priority, and on a busy machine its waits for a CPU pass a second. The file is kept small
  // because at that priority a loaded machine gives it a few percent of a CPU at most; the whole
  // search's deadline (60 s by default) is set out of the way, since it is not what this is about.
  put("slow.txt", Array.from({ length: 800 }, (_, i) => (i % 100 === 0 ? `${"x".repeat(16)}y` : `${"x".repeat(16)}z`)).join("\n"));
  const out = await f.searches.run(
    { kind: "grep", root: join(f.dir, "slow.txt"), cwd: f.dir, inside: [f.dir], source: "^(x+)+y", flags: "", maxResults: 1000 },
    { signal: new AbortController().signal, stallMs: busyBound(500), totalMs: 240_000 },
  );
  assert.equal(out.status, "done");
  assert.equal(out.status === "done" && out.result.hits.length, 8);
  assert.equal(f.searches.running, 0);
});

test("cancelling a search ends it at once and leaves no thread", async () => {
  const abort = new AbortController();
  const pending = f.searches.run(
    { kind: "grep", root: f.dir, cwd: f.dir, inside: [f.dir], source: "(a+)+$", flags: "", maxResults: 10 },
    { signal: abort.signal, stallMs: 60_000 },
  );
  abort.abort();
  assert.deepEqual(await pending, { status: "cancelled" });
  assert.equal(f.searches.running, 0);
  f.abort.abort();
  assert.equal((await call(grepTool, { pattern: "plain" }, f.ctx)).output, "Cancelled.");
});

test("a search past its overall deadline stops and says its results are partial", async () => {
  const out = await f.searches.run(
    { kind: "glob", root: f.dir, cwd: f.dir, inside: [f.dir], glob: "**" },
    { signal: new AbortController().signal, totalMs: 0 },
  );
  assert.equal(out.status, "done");
  assert.equal(out.status === "done" && out.result.timedOut, true);
});

test("a missing root fails with the file-system error, as before", async () => {
  const g = await call(globTool, { pattern: "*.ts", path: "nope" }, f.ctx);
  assert.equal(g.failed, true);
  assert.match(g.output, /No such file or directory: nope/);
  const r = await call(grepTool, { pattern: "x", path: "nope/a.txt" }, f.ctx);
  assert.match(r.output, /No such file or directory: nope\/a\.txt/);
});

/** This process's threads (Linux tasks) with their scheduler state and nice value. */
function tasks(): { tid: number; state: string; nice: number }[] {
  return readdirSync("/proc/self/task").flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // The state is the 3rd field of the stat line, nice the 19th.
      return [{ tid: Number(tid), state: fields[0]!, nice: Number(fields[16]) }];
    } catch {
      return [];
    }
  });
}

test("a stuck search's thread runs at nice 10, and the loop's thread keeps its priority", { skip: process.platform !== "linux" }, async () => {
  // Other files of the batch share this process and may run searches of their own: the search's
  // thread is the one new reniced task, and any other reniced one is a search thread too.
  const before = new Set(tasks().map((t) => t.tid));
  const base = tasks().find((t) => t.tid === process.pid)!.nice;
  const abort = new AbortController();
  const stuck = f.searches.run(
    { kind: "grep", root: join(f.dir, "evil.txt"), cwd: f.dir, inside: [f.dir], source: "(a+)+$", flags: "", maxResults: 10 },
    { signal: abort.signal, stallMs: 600_000 },
  );
  let reniced: { tid: number; nice: number }[] = [];
  for (let i = 0; i < 500 && !reniced.some((t) => !before.has(t.tid)); i++) {
    await sleep(20);
    reniced = tasks().filter((t) => t.nice !== base);
  }
  abort.abort();
  assert.equal((await stuck).status, "cancelled");
  assert.ok(
    reniced.some((t) => !before.has(t.tid)),
    "the search's thread lowered its priority",
  );
  const want = Math.min(19, base + 10);
  assert.deepEqual(
    reniced.filter((t) => t.nice !== want),
    [],
    `every reniced thread is at nice ${want} (10, or the lowest there is above the process's own)`,
  );
  assert.equal(tasks().find((t) => t.tid === process.pid)!.nice, base, "the loop's thread keeps its priority");
});

test("a search that outlived its whole deadline says why, from its thread's state", { skip: process.platform !== "linux" }, () => {
  // This thread, reading its own state, is runnable: what a thread waiting for a CPU reads as.
  assert.match(
    overtime(61_000, process.pid, 0, 60_000),
    /^the search thread did not finish within 61 s; the machine is busy: in the last 60 s it had \d+(\.\d)? s of CPU$/,
  );
  // A thread of this process asleep (libuv's and V8's helpers wait so): what a read that hangs reads as.
  const asleep = tasks().find((t) => t.state === "S")!;
  assert.equal(overtime(61_000, asleep.tid, 0, 60_000), "the search thread did not finish within 61 s; it was waiting on the file system");
  assert.equal(overtime(61_000, 0, undefined, 60_000), "the search thread did not finish within 61 s", "no thread known: the bound alone");
});
