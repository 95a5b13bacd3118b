/**
 * Issue 25: long sessions load fast and small, idle sessions are cheap. `session/load` of a session
 * of 100,000 updates, two ways: one answer of 100,000 streamed chunks (joined into few ledger
 * records) and 100,000 ledger records written straight into the store (as the daemon writes them,
 * one update each: the most records for the count) before the daemon starts, so the bench takes
 * seconds. The daemon's resident memory is sampled while it replays: the rise over what it held
 * before the load, what it holds 2 s after, and (first load of each kind) the least it holds over the
 * 40 s after that. Then the daemon's resident memory with 1,000 idle
 * sessions attached to one window, over one, once the daemon has settled.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolvePaths } from "../../shared/paths.js";
import { reindexOps } from "../../daemon/records/list-index.js";
import type { LedgerBody } from "../../daemon/ledger/types.js";
import type { SessionRecord } from "../../daemon/sessions/types.js";
import { keys, Store, type BatchOp } from "../../daemon/store/store.js";
import { stopDaemon, TEST_API_KEY, waitForDaemonPid } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";
import { RawClient } from "./raw-client.js";
import { summarize, type Row } from "./stats.js";

function statusKiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
}

/**
 * A session of `events` ledger records as a long working session leaves them: turns of a prompt,
 * reasoning, tool calls and their results, and answer text; every chunk a record of its own (as
 * chunks that streamed more than one write buffer apart are), so nothing is joined.
 */
export async function writeLongSession(home: string, cwd: string, events: number): Promise<string> {
  const id = randomUUID();
  const store = await Store.open(resolvePaths({ ...process.env, REASONIX_HOME: home }).dbDir);
  try {
    const at = new Date().toISOString();
    let seq = 0;
    let turn = 0;
    let ops: BatchOp[] = [];
    const put = async (body: LedgerBody): Promise<void> => {
      seq++;
      ops.push({ type: "put", key: keys.event(id, seq), value: { ...body, seq, at } });
      if (ops.length >= 2000) {
        await store.batch(ops, false);
        ops = [];
      }
    };
    while (seq < events) {
      const turnId = `turn-${++turn}`;
      const answer = randomUUID();
      const thought = randomUUID();
      await put({ type: "turn_start", turnId });
      await put({
        type: "update",
        update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: `question ${turn}: what does this part do?` }, messageId: randomUUID() },
      });
      for (let i = 0; i < 20 && seq < events; i++) {
        await put({ type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: `thinking ${i} ` }, messageId: thought } });
      }
      const toolCallId = `call-${turn}`;
      await put({ type: "update", update: { sessionUpdate: "tool_call", toolCallId, title: "read_file src/main.ts", kind: "read", status: "pending" } });
      await put({
        type: "update",
        update: {
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: "completed",
          content: [{ type: "content", content: { type: "text", text: "export const main = () => 1;\n".repeat(4) } }],
        },
      });
      for (let i = 0; i < 150 && seq < events - 1; i++) {
        await put({
          type: "update",
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `token ${i} of answer ${turn} ` }, messageId: answer },
        });
      }
      await put({ type: "turn_end", turnId, stopReason: "end_turn" });
    }
    const record: SessionRecord = {
      id,
      cwd,
      additionalDirectories: [],
      title: "a long session",
      createdAt: at,
      updatedAt: at,
      model: "deepseek-v4-flash",
      effort: "auto",
      mode: "normal",
      toolApproval: "workspace-write",
      status: "idle",
      lastSeq: seq,
      historyLength: 1,
    };
    ops.push(
      { type: "put", key: keys.history(id, 0), value: { role: "system", content: "You are a coding agent." } },
      { type: "put", key: keys.session(id), value: record },
      ...reindexOps([], record).ops,
    );
    await store.batch(ops, true);
    return id;
  } finally {
    await store.close();
  }
}

/** A session whose one answer streamed `chunks` chunks at once: joined into few ledger records (ledger-join.ts). */
export async function streamLongSession(env: Record<string, string>, model: ScriptedModel, cwd: string, chunks: number): Promise<string> {
  const writer = new RawClient(env);
  try {
    await writer.request("initialize", { protocolVersion: 1 });
    const { sessionId } = await writer.request("session/new", { cwd, mcpServers: [] });
    model.enqueue({ content: Array.from({ length: chunks }, (_, i) => `token ${i} `) });
    await writer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "a long answer" }] });
    return sessionId;
  } finally {
    await writer.close();
    await stopDaemon(env.REASONIX_HOME!);
  }
}

/** CPU time (ms) the process has used, user and system. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

export interface LongLoad {
  ms: number;
  /** The daemon's CPU time over the load (a loaded machine stretches `ms`, not this). */
  cpu: number;
  /** The window's shim's CPU time over the load: it relays every update to stdout. */
  shimCpu: number;
  updates: number;
  /** Resident memory (KiB) before the load, its peak while it ran, and 2 s after the answer. */
  before: number;
  peak: number;
  after: number;
  /** With `settleSeconds`: the least resident memory (KiB) over that many seconds after the 2 s sample. */
  settled?: number;
}

/** How many integrity scans the daemons of `home` have logged as done. */
function scansDone(home: string): number {
  try {
    return readFileSync(resolvePaths({ ...process.env, REASONIX_HOME: home }).logFile, "utf8").split("store integrity scan done").length - 1;
  } catch {
    return 0;
  }
}

/**
 * One load of `sessionId` by a fresh window on a fresh daemon; the daemon is stopped after. Measured
 * once the daemon's start-up integrity scan is done (as growth.ts does): it begins 1 s after the first
 * requests and reads every key of the long ledger too, so it ran into a long load and into the
 * memory measured 2 s after it.
 */
export async function loadOnce(env: Record<string, string>, sessionId: string, cwd: string, settleSeconds = 0): Promise<LongLoad> {
  const scans = scansDone(env.REASONIX_HOME!);
  const reader = new RawClient(env);
  try {
    await reader.request("initialize", { protocolVersion: 1 });
    const pid = await waitForDaemonPid(env.REASONIX_HOME!);
    for (let i = 0; i < 300 && scansDone(env.REASONIX_HOME!) <= scans; i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    const before = statusKiB(pid, "VmRSS");
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, statusKiB(pid, "VmRSS"));
    }, 5);
    const cpu0 = cpuMs(pid);
    const shim0 = cpuMs(reader.child.pid!);
    const started = process.hrtime.bigint();
    await reader.request("session/load", { sessionId, cwd, mcpServers: [] });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const cpu = cpuMs(pid) - cpu0;
    const shimCpu = cpuMs(reader.child.pid!) - shim0;
    clearInterval(sampler);
    peak = Math.max(peak, statusKiB(pid, "VmRSS"), statusKiB(pid, "VmHWM"));
    const updates = reader.notifications;
    await new Promise((r) => setTimeout(r, 2000));
    const after = statusKiB(pid, "VmRSS");
    return { ms, cpu, shimCpu, updates, before, peak, after, ...(settleSeconds > 0 ? { settled: await settledKiB(pid, settleSeconds) } : {}) };
  } finally {
    await reader.close();
    await stopDaemon(env.REASONIX_HOME!);
  }
}

const SETTLE_SECONDS = 40;

export async function longLoadBench(opts: { loads: number; events?: number }): Promise<Row[]> {
  const events = opts.events ?? 100_000;
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  const model = await ScriptedModel.start();
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  try {
    const n = events.toLocaleString("en-US");
    const rows: Row[] = [];
    const kinds = [
      { name: `${n} chunks streamed in one answer`, id: await streamLongSession(env, model, workdir, events) },
      { name: `${n} ledger records`, id: await writeLongSession(home, workdir, events) },
    ];
    for (const kind of kinds) {
      const runs: LongLoad[] = [];
      // The first load also waits for memory to settle: V8 gives back a load's young garbage only at
      // a full collection some 10-30 s later, which 2 s after the answer does not show.
      for (let i = 0; i < opts.loads; i++) runs.push(await loadOnce(env, kind.id, workdir, i === 0 ? SETTLE_SECONDS : 0));
      rows.push(
        summarize(
          `session/load of ${kind.name} (${runs[0]?.updates} updates before the answer)`,
          runs.map((r) => r.ms),
          500,
        ),
        summarize(
          `  daemon CPU during it`,
          runs.map((r) => r.cpu),
          undefined,
        ),
        summarize(
          `  the shim's CPU during it`,
          runs.map((r) => r.shimCpu),
          undefined,
        ),
        summarize(
          `  daemon RSS rise while it loads`,
          runs.map((r) => (r.peak - r.before) / 1024),
          100,
          "MiB",
        ),
        summarize(
          `  daemon RSS 2 s after the answer, over before`,
          runs.map((r) => (r.after - r.before) / 1024),
          undefined,
          "MiB",
        ),
        summarize(
          `  daemon RSS settled after it (least over ${SETTLE_SECONDS} s), over before`,
          runs.flatMap((r) => (r.settled === undefined ? [] : [(r.settled - r.before) / 1024])),
          undefined,
          "MiB",
        ),
      );
    }
    return rows;
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}

/** The least RSS (KiB) over `seconds` of idleness: V8 gives back the garbage of what ran before only some 10-40 s after. */
async function settledKiB(pid: number, seconds: number): Promise<number> {
  let least = statusKiB(pid, "VmRSS");
  for (let t = 0; t < seconds * 2; t++) {
    await new Promise((r) => setTimeout(r, 500));
    least = Math.min(least, statusKiB(pid, "VmRSS"));
  }
  return least;
}

/**
 * Daemon RSS (KiB) added by `count` idle sessions made by one window, over the window with one:
 * 3 s after the last was made (garbage of making them included), and settled (the least over 45 s
 * idle, against the least over 30 s before).
 */
export async function idleSessions(env: Record<string, string>, cwd: string, count: number): Promise<{ soon: number; settled: number }> {
  const w = new RawClient(env);
  try {
    await w.request("initialize", { protocolVersion: 1 });
    await w.request("session/new", { cwd, mcpServers: [] });
    const pid = await waitForDaemonPid(env.REASONIX_HOME!);
    const before = await settledKiB(pid, 30);
    for (let i = 0; i < count; i++) await w.request("session/new", { cwd, mcpServers: [] });
    await new Promise((r) => setTimeout(r, 3000));
    const soon = statusKiB(pid, "VmRSS") - before;
    return { soon, settled: (await settledKiB(pid, 45)) - before };
  } finally {
    await w.close();
    await stopDaemon(env.REASONIX_HOME!);
  }
}

export async function idleSessionsBench(opts: { runs: number; count?: number }): Promise<Row[]> {
  const count = opts.count ?? 1000;
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  const model = await ScriptedModel.start();
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  try {
    const added: Array<{ soon: number; settled: number }> = [];
    for (let i = 0; i < opts.runs; i++) added.push(await idleSessions(env, workdir, count));
    const n = count.toLocaleString("en-US");
    return [
      summarize(
        `daemon RSS added by ${n} attached idle sessions, settled`,
        added.map((a) => a.settled / 1024),
        40,
        "MiB",
      ),
      summarize(
        "  each attached idle session, settled",
        added.map((a) => a.settled / count),
        40,
        "KiB",
      ),
      summarize(
        "  the same 3 s after making them",
        added.map((a) => a.soon / 1024),
        undefined,
        "MiB",
      ),
    ];
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("session-size.js")) {
  const { table } = await import("./stats.js");
  const events = Number(process.argv[2] ?? 100_000);
  const runs = Number(process.argv[3] ?? 3);
  const rows = process.argv[4] === "idle" ? await idleSessionsBench({ runs }) : await longLoadBench({ loads: runs, events });
  process.stdout.write(`${table(rows)}\n`);
}
