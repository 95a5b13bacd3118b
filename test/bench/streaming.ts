/**
 * Fifty sessions streaming at once (issue 17, item 7): 5 windows × 10 sessions, the scripted model
 * sending each session a chunk every 5 ms. Measured meanwhile: the daemon's /livez latency (probed
 * every 10 ms over its socket) beside an idle control server probed the same way from the same
 * process, the daemon's own event-loop lag (its /metrics histogram), chunks delivered per second and
 * in order, and the daemon's CPU time per streamed chunk.
 */
import { spawn } from "node:child_process";
import { Worker } from "node:worker_threads";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, daemonPid, stopDaemon, TEST_API_KEY, waitForDaemonPid } from "../support/harness.js";
import { noiseWindow, processCpuMs, type Noise } from "./machine.js";
import { gauge, getText } from "../support/daemon-http.js";
import type { ModelWorkerData } from "./model-worker.js";
import { RawClient } from "./raw-client.js";
import { relayFloor, type RelayReader } from "./relay-floor.js";
import { pacing } from "./pacing.js";
import { quantileOf as q, summarize, type Row } from "./stats.js";

/** Probes `path` back to back (10 ms apart) until stopped; resolves with each latency in ms. */
export function prober(socketPath: string, path: string): { stop(): Promise<number[]> } {
  const out: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = process.hrtime.bigint();
      await getText(socketPath, path);
      out.push(Number(process.hrtime.bigint() - t) / 1e6);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return out;
    },
  };
}

/** The daemon's system-call counts and its CPU split (user, system), from /proc; zeros elsewhere. */
function kernelSide(pid: number): { writes: number; reads: number; userMs: number; systemMs: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, "utf8");
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, "m").exec(io)?.[1] ?? 0);
    return { writes: field("syscw"), reads: field("syscr"), userMs: f[11]! * 10, systemMs: f[12]! * 10 };
  } catch {
    return { writes: 0, reads: 0, userMs: 0, systemMs: 0 };
  }
}

const now = (): number => performance.timeOrigin + performance.now();

interface BenchModel {
  url: string;
  /** epoch milliseconds at which the request of each session reached the model, in order */
  asked(): number[];
  /** epoch milliseconds at which the model wrote chunk i of session k, as `sent()[k][i]` */
  sent(): number[][];
  close(): Promise<void>;
}

/** The scripted model on a worker thread (model-worker.ts), its timestamps in shared memory. */
async function startModel(sessions: number, chunks: number, delayMs: number): Promise<BenchModel> {
  const asked = new SharedArrayBuffer(sessions * 8);
  const sent = new SharedArrayBuffer(sessions * chunks * 8);
  const data: ModelWorkerData = { chunks, delayMs, asked, sent };
  const worker = new Worker(new URL("./model-worker.js", import.meta.url), { workerData: data });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the model thread exited (${code})`)));
  });
  const times = new Float64Array(sent);
  return {
    url,
    asked: () => [...new Float64Array(asked)].filter((t) => t > 0).sort((x, y) => x - y),
    sent: () => Array.from({ length: sessions }, (_, k) => [...times.subarray(k * chunks, (k + 1) * chunks)].filter((t) => t > 0)),
    close: async () => {
      const exited = new Promise((r) => worker.once("exit", r));
      worker.postMessage("close");
      await exited;
    },
  };
}

const CONTROL = `require("node:http").createServer((q, s) => s.end('{"ok":true}')).listen(process.argv[1], () => process.stdout.write("ready\\n"));`;

export interface StreamingResult {
  rows: Row[];
  detail: string;
  noise: Noise;
}

/** One run's figures: the table takes the median of each over the runs. */
interface StreamingFigures {
  livezP99: number;
  controlP99: number;
  lagP99: number;
  sentRate: number;
  deliveredRate: number;
  delayP99: number;
  endToEndRate: number;
  cpuPerChunkUs: number;
  /** chunks missing, repeated or out of order */
  faults: number;
}

/** The load unless a caller says otherwise: 5 windows × 10 sessions, 200 chunks 5 ms apart. */
const LOAD = { windows: 5, perWindow: 10, chunks: 200, delayMs: 5 };

interface StreamingOptions {
  windows?: number;
  perWindow?: number;
  chunks?: number;
  delayMs?: number;
  /** Unrecorded rounds of the same load before the measured one (default BENCH_WARM_ROUNDS, else 0). */
  warmRounds?: number;
}

/** `runs` runs of streamingRun; the detail is the last run's, with the spread of every run below it. */
export async function streamingBench(opts: StreamingOptions & { runs?: number } = {}): Promise<StreamingResult> {
  const runs: Awaited<ReturnType<typeof streamingRun>>[] = [];
  for (let i = 0; i < (opts.runs ?? 1); i++) runs.push(await streamingRun(opts));
  const all = <K extends keyof StreamingFigures>(k: K): number[] => runs.map((r) => r.figures[k]);
  const mid = (k: keyof StreamingFigures): number => q(all(k), 0.5);
  const last = runs.at(-1)!;
  const shares = runs.map((r) => (r.figures.deliveredRate / r.figures.sentRate) * 100);
  const faults = all("faults").reduce((a, b) => a + b, 0);
  const rows: Row[] = [
    summarize(`daemon /livez latency p99, ${last.label}`, all("livezP99"), 50),
    summarize("idle control server p99, probed alongside", all("controlP99"), undefined),
    summarize(`daemon event-loop lag p99, ${last.label}`, all("lagP99"), 50),
    {
      ...summarize(
        `chunks delivered in order as a share of the model's rate (delivered ${Math.round(mid("deliveredRate"))}/s over the deliveries' span, the model ${Math.round(mid("sentRate"))}/s over its writes'; ${faults} missing or out of order)`,
        shares,
        95,
        "%",
      ),
      atLeast: true,
    },
    summarize("delay from the model's write to the window, p99", all("delayP99"), 50),
    summarize(`chunks/s from the prompts sent to the last end_turn (nominal model pace ~${Math.round(last.nominal)}/s)`, all("endToEndRate"), undefined, "/s"),
    summarize("daemon CPU per streamed chunk (issue 25 target 30 µs)", all("cpuPerChunkUs"), 30, "µs"),
  ];
  // A daemon that has streamed before (one unrecorded round: its hot code compiled, as in a daemon
  // that has lived a while), then the floor under it, against a model of its own with the same
  // sessions, pace and chunks (relay-floor.ts), compiled the same way.
  const few = Math.min(3, opts.runs ?? 1);
  const warm: StreamingFigures[] = [];
  for (let i = 0; i < few; i++) warm.push((await streamingRun({ ...opts, warmRounds: 1 })).figures);
  const load = { ...LOAD, ...opts };
  const sessions = load.windows * load.perWindow;
  const floors: Record<RelayReader, number[]> = { raw: [], http: [] };
  const model = await startModel(sessions, load.chunks, load.delayMs);
  try {
    for (let i = 0; i < few; i++) {
      for (const reader of ["raw", "http"] as const) floors[reader].push((await relayFloor(reader, model.url, sessions, load.windows)).cpuPerChunkUs);
    }
  } finally {
    await model.close();
  }
  rows.push(
    summarize(
      "  the same after one unrecorded round of this load (code compiled)",
      warm.map((f) => f.cpuPerChunkUs),
      30,
      "µs",
    ),
    summarize(
      "  its /livez p99 (issue 25 target 20 ms)",
      warm.map((f) => f.livezP99),
      20,
    ),
    summarize("  floor: a relay doing nothing else (raw TCP in, a frame per chunk out, compiled), CPU per chunk", floors.raw, undefined, "µs"),
    summarize("  the same relay reading through node:http", floors.http, undefined, "µs"),
  );
  const spread = runs.map((r, i) => `run ${i + 1}: ${r.brief}`).join("; ");
  return { rows, detail: runs.length > 1 ? `${last.detail}\nEach run: ${spread}` : last.detail, noise: last.noise };
}

async function streamingRun(
  opts: StreamingOptions,
): Promise<{ figures: StreamingFigures; label: string; nominal: number; detail: string; brief: string; noise: Noise }> {
  const { windows: windowsN, perWindow, chunks, delayMs } = { ...LOAD, ...opts };
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  const model = await startModel(windowsN * perWindow, chunks, delayMs);
  const env: Record<string, string> = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  // BENCH_CPU_PROF=<dir>: the daemon is started here under --cpu-prof and writes its profile there on exit.
  // BENCH_DAEMON_FLAGS="--flag …": the daemon is started here with those Node flags (to try one out).
  const flags = [
    ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ...(process.env.BENCH_DAEMON_FLAGS?.split(" ").filter(Boolean) ?? []),
  ];
  if (flags.length > 0) {
    spawn(process.execPath, [...flags, BIN, "daemon", "run"], {
      env: { ...process.env, ...env },
      stdio: "ignore",
      detached: true,
    }).unref();
    await waitForDaemonPid(home);
  }
  const controlSocket = join(home, "control.sock");
  const control = spawn(process.execPath, ["-e", CONTROL, controlSocket], { stdio: ["ignore", "pipe", "ignore"] });
  const windows: RawClient[] = [];
  try {
    await new Promise((r) => control.stdout.once("data", r));
    const sessions: Array<{ w: RawClient; id: string }> = [];
    for (let i = 0; i < windowsN; i++) {
      const w = new RawClient(env);
      windows.push(w);
      await w.request("initialize", { protocolVersion: 1 });
      for (let j = 0; j < perWindow; j++) sessions.push({ w, id: (await w.request("session/new", { cwd: workdir, mcpServers: [] })).sessionId });
    }
    const socketPath = JSON.parse(readFileSync(join(home, "run", "daemon.json"), "utf8")).socket as string;
    const pid = daemonPid(home)!;

    // Order: each session's chunks must arrive as c0, c1, … with nothing missing or repeated.
    const next = new Map<string, number>(sessions.map((s) => [s.id, 0]));
    let outOfOrder = 0;
    let delivered = 0;
    // When each session's first chunk and the run's last chunk reached their window.
    const firstChunks: number[] = [];
    let lastChunkAt = 0;
    // got[k][i]: when chunk i of session k reached its window, beside the model's sent[k][i].
    const indexOf = new Map(sessions.map((s, k) => [s.id, k]));
    const got: number[][] = sessions.map(() => []);
    for (const w of windows) {
      w.onNotification = (line) => {
        if (!line.includes('"agent_message_chunk"')) return;
        const m = /"sessionId":"([^"]+)".*"text":"c(\d+) "/.exec(line);
        if (!m) return;
        delivered++;
        lastChunkAt = now();
        got[indexOf.get(m[1]!)!]![Number(m[2])] = lastChunkAt;
        if (m[2] === "0") firstChunks.push(lastChunkAt);
        const want = next.get(m[1]!)!;
        if (Number(m[2]) !== want) outOfOrder++;
        next.set(m[1]!, Number(m[2]) + 1);
      };
    }

    // A long-lived daemon has loaded the provider's SDK long before: one short turn does it here.
    await sessions[0]!.w.request("session/prompt", { sessionId: sessions[0]!.id, prompt: [{ type: "text", text: "warm up" }] });
    // BENCH_WARM_ROUNDS=n: n unrecorded rounds of the same load first (the code's JIT compilation then falls outside the measurement).
    for (let r = 0; r < (opts.warmRounds ?? Number(process.env.BENCH_WARM_ROUNDS ?? 0)); r++) {
      await Promise.all(sessions.map((s, k) => s.w.request("session/prompt", { sessionId: s.id, prompt: [{ type: "text", text: `warm ${k}` }] })));
    }
    for (const n of next.keys()) next.set(n, 0);
    delivered = 0;
    outOfOrder = 0;
    firstChunks.length = 0;
    for (const g of got) g.length = 0;
    await getText(socketPath, "/metrics"); // resets the daemon's lag histogram
    const noise = noiseWindow([pid, control.pid!, ...windows.map((w) => w.child.pid!)]);
    const cpu0 = processCpuMs(pid);
    const k0 = kernelSide(pid);
    const shimPids = windows.map((w) => w.child.pid!);
    const shims0 = shimPids.reduce((a, p) => a + processCpuMs(p), 0);
    const self0 = processCpuMs("self");
    const livez = prober(socketPath, "/livez");
    const idle = prober(controlSocket, "/");
    const started = process.hrtime.bigint();
    const startedAt = now();
    await Promise.all(sessions.map((s, k) => s.w.request("session/prompt", { sessionId: s.id, prompt: [{ type: "text", text: `talk ${k}` }] })));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpuMs = processCpuMs(pid) - cpu0;
    const k1 = kernelSide(pid);
    const shimsMs = shimPids.reduce((a, p) => a + processCpuMs(p), 0) - shims0;
    const selfMs = processCpuMs("self") - self0;
    const ms = (t: number | undefined): string => ((t ?? startedAt) - startedAt).toFixed(0);
    firstChunks.sort((a, b) => a - b);
    const asked = model.asked();
    const [live, ctl] = await Promise.all([livez.stop(), idle.stop()]);
    if (process.env.BENCH_TRACE) process.stderr.write(`livez: ${live.map((v) => v.toFixed(0)).join(" ")}\n`);
    const machine = noise.stop();
    const metrics = await getText(socketPath, "/metrics");
    const lagP99 = gauge(metrics, "reasonix_nodejs_eventloop_lag_p99_seconds") * 1000;
    const lagMax = gauge(metrics, "reasonix_nodejs_eventloop_lag_max_seconds") * 1000;
    const expected = sessions.length * chunks;
    // The nominal pace: (chunks-1) × delay per stream, were every timer on time.
    const nominal = expected / (((chunks - 1) * delayMs) / 1000);
    const rate = delivered / seconds;
    const perChunkUs = (cpuMs * 1000) / Math.max(1, delivered);
    const label = `${sessions.length} sessions streaming (chunk every ${delayMs} ms)`;
    const pace = pacing(model.sent(), got);
    const figures: StreamingFigures = {
      livezP99: q(live, 0.99),
      controlP99: q(ctl, 0.99),
      lagP99,
      sentRate: pace.sentRate,
      deliveredRate: pace.deliveredRate,
      delayP99: q(pace.delays, 0.99),
      endToEndRate: rate,
      cpuPerChunkUs: perChunkUs,
      faults: outOfOrder + (expected - delivered),
    };
    const brief =
      `${delivered}/${expected} in order ${outOfOrder === 0}, model ${Math.round(pace.sentRate)}/s → delivered ${Math.round(pace.deliveredRate)}/s, ` +
      `delay p99 ${figures.delayP99.toFixed(1)} ms, /livez p99 ${figures.livezP99.toFixed(1)} ms, lag p99 ${lagP99.toFixed(1)} ms, ${perChunkUs.toFixed(0)} µs/chunk, end to end ${Math.round(rate)}/s`;
    return {
      figures,
      label,
      nominal,
      brief,
      detail:
        `${delivered} of ${expected} chunks delivered, ${outOfOrder} out of order, in ${seconds.toFixed(2)} s (the model alone needs ${(((chunks - 1) * delayMs) / 1000).toFixed(2)} s); ` +
        `the model wrote a session's chunks a median ${pace.sentGap.toFixed(2)} ms apart (nominal ${delayMs}), ${Math.round(pace.sentRate)}/s in all; ` +
        `delivered ${Math.round(pace.deliveredRate)}/s, the slowest session at ${(pace.worstSessionShare * 100).toFixed(0)} % of the model's pace for it; ` +
        `write → window delay median ${q(pace.delays, 0.5).toFixed(1)} ms, p99 ${q(pace.delays, 0.99).toFixed(1)} ms, max ${pace.delays.at(-1)?.toFixed(1)} ms; ` +
        `/livez p99 ${q(live, 0.99).toFixed(1)} ms max ${Math.max(...live).toFixed(1)} ms (control p99 ${q(ctl, 0.99).toFixed(1)} ms); ` +
        `lag p99 ${lagP99.toFixed(1)} ms max ${lagMax.toFixed(1)} ms; daemon CPU ${(cpuMs / 1000).toFixed(2)} s = ${perChunkUs.toFixed(0)} µs/chunk ` +
        `(user ${((k1.userMs - k0.userMs) / 1000).toFixed(2)} s, system ${((k1.systemMs - k0.systemMs) / 1000).toFixed(2)} s; ${k1.writes - k0.writes} write and ${k1.reads - k0.reads} read system calls); ` +
        `the model was asked ${ms(asked[0])}–${ms(asked.at(-1))} ms after the prompts went out, ` +
        `first chunks reached the windows ${ms(firstChunks[0])}–${ms(firstChunks.at(-1))} ms after, the last chunk at ${ms(lastChunkAt)} ms; ` +
        `the five shims used ${(shimsMs / 1000).toFixed(2)} s of CPU, ` +
        `the model (a thread) and the clients and probes (this process) ${(selfMs / 1000).toFixed(2)} s; ` +
        `other processes used ${machine.othersCores.toFixed(2)} cores meanwhile`,
      noise: machine,
    };
  } finally {
    for (const w of windows) await w.close().catch(() => undefined);
    control.kill();
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("streaming.js")) {
  const { table } = await import("./stats.js");
  const at = process.argv.indexOf("--runs");
  const r = await streamingBench({ runs: at === -1 ? 1 : Number(process.argv[at + 1]) });
  process.stdout.write(`${table(r.rows)}\n${r.detail}\n`);
}
