/**
 * How each cost grows (issue 25): every figure at several sizes, the growth fitted on the sizes,
 * and the outliers named. Stored sessions (cold start, idle memory, the first session/list page,
 * the daemon's CPU from spawn until it is quiet), attached idle sessions (memory, idle CPU, /livez,
 * the next session/new), ledger length (session/load, memory during and after), windows streaming
 * (CPU per chunk, /livez p99),
 * running background jobs (idle CPU, /livez p99, memory). Large stores are written before the
 * daemon starts (generate.ts). Start-up figures run with NODE_EXTRA_CA_CERTS unset, as on most
 * users' machines (it costs every Node process 60–80 ms here). Alone: `node dist/test/bench/growth.js
 * [--quick] [--only=stored,live,ledgers,windows,jobs]`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolvePaths } from "../../shared/paths.js";
import { stopDaemon, TEST_API_KEY, waitForDaemonPid } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";
import { fillLedger, fillSessions } from "./generate.js";
import { processCpuMs } from "./machine.js";
import { RawClient } from "./raw-client.js";
import { rssMiB } from "./sessions.js";
import { prober, streamingBench } from "./streaming.js";
import { quantileOf } from "./stats.js";

/** One figure at each size: samples[i] are the rounds at sizes[i]. */
interface Series {
  group: string;
  figure: string;
  unit: string;
  sizes: number[];
  samples: number[][];
  /** Why the figure grows as it does, printed beside its outliers. */
  why?: string;
  /** Differences this small are the measurement's own resolution (default 2 units). */
  floor?: number;
}

const median = (xs: number[]): number => quantileOf(xs, 0.5);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const since = (t: bigint): number => Number(process.hrtime.bigint() - t) / 1e6;

function series(group: string, figure: string, unit: string, sizes: number[], more: Pick<Series, "why" | "floor"> = {}): Series {
  return { group, figure, unit, sizes, samples: sizes.map(() => []), ...more };
}

/** Least-squares slope and fit quality of y on x. */
function regress(x: number[], y: number[]): { slope: number; intercept: number; r2: number } {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { slope, intercept: my - slope * mx, r2: syy === 0 ? 1 : (sxy * sxy) / (sxx * syy) };
}

/**
 * The growth of the medians over the sizes. Flat when they all lie within 25 % of their mean (or
 * within `floor`, 2 units unless the measurement is coarser: ms, MiB, KiB, µs, so a few
 * milliseconds of noise on a small figure stay flat);
 * otherwise the better least-squares fit of cost = a + b·n (linear) and cost = a + b·ln n
 * (logarithmic), its slope per a round step of the sizes, or cost = a + b/n when that fits better and
 * falls (a fixed cost spread over n); "flat, noisy" when neither line explains half the variance.
 * Sizes are shifted by one when they start
 * at 0 (jobs), so ln stays defined.
 */
export function fitGrowth(sizes: number[], medians: number[], unit: string, floor = 2): { growth: string; model: (s: number) => number } {
  const mean = medians.reduce((a, b) => a + b, 0) / medians.length;
  const spread = Math.max(...medians) - Math.min(...medians);
  if (spread <= Math.max(0.25 * Math.abs(mean), floor)) return { growth: "flat", model: () => mean };
  const shift = (s: number): number => s + (sizes[0] === 0 ? 1 : 0);
  const xs = sizes.map(shift);
  const lin = regress(xs, medians);
  const log = regress(xs.map(Math.log), medians);
  const signed = (v: number): string => `${v >= 0 ? "+" : "−"}${Math.abs(v) >= 10 ? Math.abs(v).toFixed(0) : Math.abs(v).toPrecision(2)}`;
  // No curve explains the spread: noise, not growth.
  if (Math.max(lin.r2, log.r2) < 0.5 && spread <= Math.abs(mean))
    return { growth: `flat, noisy (spread ${spread.toFixed(1)} ${unit}; best fit r² ${Math.max(lin.r2, log.r2).toFixed(2)})`, model: () => mean };
  // A fixed cost spread over n (per-chunk CPU over more windows, per-session memory over more sessions) falls as a + b/n.
  const inv = regress(
    xs.map((x) => 1 / x),
    medians,
  );
  if (inv.slope > 0 && inv.r2 > Math.max(lin.r2, log.r2)) {
    return {
      growth: `falling as 1/n: ${signed(inv.intercept)} ${unit} + ${signed(inv.slope)} ${unit} ÷ n (r² ${inv.r2.toFixed(2)})`,
      model: (s) => inv.intercept + inv.slope / shift(s),
    };
  }
  if (lin.r2 >= log.r2) {
    const per = Math.max(1, 10 ** (Math.floor(Math.log10(Math.max(...sizes))) - 1));
    return {
      growth: `${lin.slope < 0 ? "falling, " : ""}linear: ${signed(lin.slope * per)} ${unit} per ${per.toLocaleString("en-US")} (r² ${lin.r2.toFixed(2)})`,
      model: (s) => lin.intercept + lin.slope * shift(s),
    };
  }
  return {
    growth: `${log.slope < 0 ? "falling, " : ""}logarithmic: ${signed(log.slope * Math.LN10)} ${unit} per ×10 (r² ${log.r2.toFixed(2)})`,
    model: (s) => log.intercept + log.slope * Math.log(shift(s)),
  };
}

/** Rounds off their cell's median by half or more, and cells off the fitted curve by half or more. */
function outliers(s: Series, model: (size: number) => number): string[] {
  const out: string[] = [];
  const fmt = (v: number): string => `${v.toFixed(1)} ${s.unit}`;
  const floor = s.floor ?? 2;
  s.sizes.forEach((size, i) => {
    const m = median(s.samples[i]!);
    for (const v of s.samples[i]!) {
      if (Math.abs(v - m) > Math.max(0.5 * Math.abs(m), floor)) out.push(`${s.figure} at ${size}: a round at ${fmt(v)} (median ${fmt(m)})`);
    }
    const fitted = model(size);
    if (s.sizes.length > 2 && Math.abs(m - fitted) > Math.max(0.5 * Math.abs(fitted), floor))
      out.push(`${s.figure} at ${size}: median ${fmt(m)} off the fitted ${fmt(fitted)}`);
  });
  return out;
}

export function growthTable(all: Series[]): { table: string; outliers: string[] } {
  const head = ["figure", "sizes", "medians (each size)", "fitted growth"];
  const found: string[] = [];
  const body = all.map((s) => {
    const medians = s.samples.map(median);
    const fit = fitGrowth(s.sizes, medians, s.unit, s.floor);
    const odd = outliers(s, fit.model);
    found.push(...odd.map((o, i) => (i === odd.length - 1 && s.why ? `${o}. ${s.why}` : o)));
    const n = Math.min(...s.samples.map((x) => x.length));
    return [
      `${s.group}: ${s.figure}`,
      s.sizes.map((x) => x.toLocaleString("en-US")).join(" / "),
      `${medians.map((m) => (Math.abs(m) >= 100 ? m.toFixed(0) : m.toFixed(1))).join(" / ")} ${s.unit} (n=${n})`,
      fit.growth,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return { table: [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n"), outliers: found };
}

/** Waits until the daemon's CPU time stops moving (three 100 ms polls alike, at most 15 s); its CPU ms so far. */
async function quietCpuMs(pid: number): Promise<number> {
  let last = processCpuMs(pid);
  let still = 0;
  for (let i = 0; i < 150 && still < 3; i++) {
    await sleep(100);
    const now = processCpuMs(pid);
    still = now === last ? still + 1 : 0;
    last = now;
  }
  return last;
}

/** How many integrity scans the daemons of `home` have logged as done. */
function scansDone(home: string): number {
  try {
    return readFileSync(resolvePaths({ ...process.env, REASONIX_HOME: home }).logFile, "utf8").split("store integrity scan done").length - 1;
  } catch {
    return 0;
  }
}

/** Waits (at most 30 s) for one more integrity scan than `before` to be logged as done. */
async function scanFinished(home: string, before: number): Promise<void> {
  for (let i = 0; i < 600 && scansDone(home) <= before; i++) await sleep(50);
}

interface Env {
  home: string;
  workdir: string;
  model: ScriptedModel;
  env: Record<string, string>;
}

async function openEnv(): Promise<Env & { close(): Promise<void> }> {
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  const model = await ScriptedModel.start();
  return {
    home,
    workdir,
    model,
    env: { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY },
    async close() {
      await stopDaemon(home);
      await model.close();
      rmSync(home, { recursive: true, force: true });
      rmSync(workdir, { recursive: true, force: true });
    },
  };
}

async function withHome<T>(f: (e: Env) => Promise<T>): Promise<T> {
  const e = await openEnv();
  try {
    return await f(e);
  } finally {
    await e.close();
  }
}

/** A window spawned with no daemon running: the milliseconds to its `initialize` answer. */
async function coldWindow(env: Record<string, string>): Promise<{ w: RawClient; ms: number }> {
  const t = process.hrtime.bigint();
  const w = new RawClient(env);
  await w.request("initialize", { protocolVersion: 1 });
  return { w, ms: since(t) };
}

async function storedSessions(sizes: number[], rounds: number): Promise<Series[]> {
  const g = "stored sessions";
  const cold = series(g, "cold start → initialize", "ms", sizes);
  const list = series(g, "first session/list page after it", "ms", sizes);
  const cpu = series(g, "daemon CPU from spawn until quiet after its integrity scan", "ms", sizes);
  const rss = series(g, "idle daemon RSS", "MiB", sizes);
  const homes: Array<Env & { close(): Promise<void> }> = [];
  try {
    for (const size of sizes) {
      const e = await openEnv();
      homes.push(e);
      await fillSessions(
        e.home,
        size,
        Array.from({ length: 10 }, (_, i) => join(e.workdir, `project-${i}`)),
      );
    }
    // Rounds interleave the sizes, so a noisy moment on the machine spreads over all of them.
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < sizes.length; i++) {
        const e = homes[i]!;
        const scans = scansDone(e.home);
        const { w, ms } = await coldWindow(e.env);
        const t = process.hrtime.bigint();
        const page = await w.request("session/list", {});
        list.samples[i]!.push(since(t));
        if (page.sessions.length !== Math.min(50, sizes[i]!)) throw new Error(`session/list gave ${page.sessions.length} sessions`);
        const pid = await waitForDaemonPid(e.home);
        await scanFinished(e.home, scans);
        cpu.samples[i]!.push(await quietCpuMs(pid));
        rss.samples[i]!.push(rssMiB(pid));
        cold.samples[i]!.push(ms);
        await w.close();
        await stopDaemon(e.home);
      }
    }
  } finally {
    for (const e of homes) await e.close();
  }
  return [cold, list, cpu, rss];
}

const IDLE_SECONDS = 6;
/** /proc counts CPU in 10 ms ticks: one tick over the seconds kept, in ms/s. */
const CPU_FLOOR = 10 / (IDLE_SECONDS - 1);
const IDLE_CPU = `idle daemon CPU, nothing asked (${IDLE_SECONDS} s, its busiest second left out)`;

/**
 * The daemon's CPU per second with nothing asked of it (no probes), over IDLE_SECONDS one-second
 * slices less the busiest: a one-off burst seen here after making the jobs or sessions (100–500 ms,
 * once: a garbage collection of what making them left) is not a cost of idling, yet it would be
 * most of a 3 s window's figure.
 */
async function idleCpu(pid: number): Promise<number> {
  const slices: number[] = [];
  let c = processCpuMs(pid);
  let t = process.hrtime.bigint();
  for (let i = 0; i < IDLE_SECONDS; i++) {
    await sleep(1000);
    const c1 = processCpuMs(pid);
    slices.push(((c1 - c) * 1000) / since(t));
    c = c1;
    t = process.hrtime.bigint();
  }
  slices.sort((a, b) => a - b).pop();
  return slices.reduce((a, b) => a + b, 0) / slices.length;
}

/** /livez p99 over `ms` of probes 10 ms apart. */
async function livezP99(home: string, ms: number): Promise<number> {
  const socketPath = JSON.parse(readFileSync(join(home, "run", "daemon.json"), "utf8")).socket as string;
  // The route's first answers, before V8 has compiled it, are not the steady figure.
  const warm = prober(socketPath, "/livez");
  await sleep(300);
  await warm.stop();
  const probe = prober(socketPath, "/livez");
  await sleep(ms);
  return quantileOf(await probe.stop(), 0.99);
}

const LIVE_HOW =
  "Attached idle sessions: one window makes them (session/new, 16 in flight at a time) and stays attached; none is prompted. " +
  "Each size is measured once the daemon's CPU is quiet and 1 s more: RSS over the daemon with the window and its first session, " +
  `CPU over ${IDLE_SECONDS} s with nothing asked of the daemon, then /livez probed every 10 ms for 2 s, then five more session/new one at a time. ` +
  "Neither window holds the idle-unload sweep, which visits every live session every 30 s (16–28 ms at 10,000 here).";

const PIPELINE = 16; // session/new requests in flight at once while the sessions are made

/**
 * Sessions made by one window and left attached and idle (never prompted: the cheapest the
 * daemon allows, and what an editor that opens a session per tab and leaves it has), 16
 * session/new requests in flight at a time; each size measured after the daemon is quiet again.
 */
async function liveSessions(sizes: number[], rounds: number): Promise<Series[]> {
  const g = "attached idle sessions (one window, never prompted)";
  const added = series(g, "daemon RSS added by the sessions", "MiB", sizes, {
    why:
      "The fitted slope is what each session keeps; the rest is a one-off that comes with the first hundreds of sessions made in a burst " +
      "and does not grow after: V8 grows its young generation under the allocation rate of making them (to 2 × 8 MiB, the daemon's cap) and keeps it a while, " +
      "and memory outside the JS heap grows too (LevelDB's write buffer and block cache, 4 + 8 MiB at most); one session alone adds neither",
  });
  const per = series(g, "daemon RSS added per session", "KiB", sizes, {
    why:
      "At 1 it is one session against the RSS's own noise; at 100 and 1,000 it carries the one-off of the row above spread over few sessions; " +
      "at 10,000 it is closest to what each session keeps (the slope of the row above)",
  });
  const cpu = series(g, IDLE_CPU, "ms/s", sizes, { floor: CPU_FLOOR });
  const livez = series(g, "/livez p99, idle", "ms", sizes, {
    why: "The p99 of ~150 probes is their second slowest: one pause of the machine (other processes) sets it; it does not follow the sessions",
  });
  const next = series(g, "one more session/new answered", "ms", sizes, {
    why: "It falls as V8 optimizes the session/new path over the first thousand sessions; nothing in it visits the sessions already live",
  });
  for (let r = 0; r < rounds; r++) {
    await withHome(async (e) => {
      const { w } = await coldWindow(e.env);
      const pid = await waitForDaemonPid(e.home);
      const open = (): Promise<unknown> => w.request("session/new", { cwd: e.workdir, mcpServers: [] });
      await open(); // the session path's modules, loaded once
      // The session/new path compiled as in a daemon in use: twenty sessions in a second window, which
      // leave memory when it closes (never prompted).
      const warm = new RawClient(e.env);
      await warm.request("initialize", { protocolVersion: 1 });
      for (let k = 0; k < 20; k++) await warm.request("session/new", { cwd: e.workdir, mcpServers: [] });
      await warm.close();
      await scanFinished(e.home, 0);
      await quietCpuMs(pid);
      await sleep(1000);
      const base = rssMiB(pid);
      let made = 0;
      for (let i = 0; i < sizes.length; i++) {
        for (; made < sizes[i]!; made += Math.min(PIPELINE, sizes[i]! - made))
          await Promise.all(Array.from({ length: Math.min(PIPELINE, sizes[i]! - made) }, open));
        await quietCpuMs(pid);
        await sleep(1000);
        const mib = rssMiB(pid) - base;
        added.samples[i]!.push(mib);
        per.samples[i]!.push((mib * 1024) / sizes[i]!);
        cpu.samples[i]!.push(await idleCpu(pid));
        livez.samples[i]!.push(await livezP99(e.home, 2000));
        // Five more, one at a time (counted in the next size's sessions).
        const times: number[] = [];
        for (let k = 0; k < 5; k++, made++) {
          const t = process.hrtime.bigint();
          await open();
          times.push(since(t));
        }
        next.samples[i]!.push(median(times));
      }
      await w.close();
    });
  }
  return [added, per, cpu, livez, next];
}

async function ledgers(sizes: number[], rounds: number): Promise<Series[]> {
  const g = "ledger length (events)";
  const load = series(g, "session/load answered", "ms", sizes, {
    why: "The line is set by the two long ledgers and meets 0 events well above what a load costs before its first event, so a short ledger sits under it",
  });
  const during = series(g, "daemon RSS added during the load (peak)", "MiB", sizes);
  const after = series(g, "daemon RSS added, 1 s after the window closed", "MiB", sizes);
  await withHome(async (e) => {
    const ids: string[] = [];
    for (const size of sizes) ids.push(await fillLedger(e.home, e.workdir, size));
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < sizes.length; i++) {
        // A fresh daemon each time, so one load's garbage is not the next one's baseline; measured
        // once its integrity scan (which reads the long ledgers' keys too) is done.
        const scans = scansDone(e.home);
        const { w } = await coldWindow(e.env);
        const pid = await waitForDaemonPid(e.home);
        await w.request("session/new", { cwd: e.workdir, mcpServers: [] }); // the session path's modules, as a daemon in use has them
        await scanFinished(e.home, scans);
        await quietCpuMs(pid);
        const base = rssMiB(pid);
        let peak = base;
        const poll = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 5);
        const t = process.hrtime.bigint();
        await w.request("session/load", { sessionId: ids[i], cwd: e.workdir, mcpServers: [] });
        load.samples[i]!.push(since(t));
        clearInterval(poll);
        peak = Math.max(peak, rssMiB(pid));
        during.samples[i]!.push(peak - base);
        await w.close();
        await sleep(1000);
        after.samples[i]!.push(rssMiB(pid) - base);
        await stopDaemon(e.home);
      }
    }
  });
  return [load, during, after];
}

async function windows(sizes: number[], runs: number): Promise<Series[]> {
  const g = "windows, one session each streaming (chunk every 5 ms)";
  const cpu = series(g, "daemon CPU per streamed chunk", "µs", sizes, {
    why:
      "Each window's turn has fixed costs (its start, the model request, and a fresh daemon compiling its hot path) spread over its 200 chunks, " +
      "so the figure falls as more windows stream; a 1/n fit's constant is the cost of a chunk itself",
  });
  const livez = series(g, "/livez p99 while streaming", "ms", sizes);
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < sizes.length; i++) {
      const res = await streamingBench({ windows: sizes[i]!, perWindow: 1, runs: 1 });
      const row = (prefix: string): number => res.rows.find((x) => x.name.startsWith(prefix))!.median;
      cpu.samples[i]!.push(row("daemon CPU per streamed chunk"));
      livez.samples[i]!.push(row("daemon /livez latency p99"));
    }
  }
  return [cpu, livez];
}

const JOBS_PER_SESSION = 16; // daemon/tools/jobs.ts MAX_JOBS
const TICKER = "while :; do echo tick; sleep 1; done";

async function jobs(sizes: number[], rounds: number): Promise<Series[]> {
  const g = "running background jobs (each printing a line a second)";
  const cpu = series(g, IDLE_CPU, "ms/s", sizes, { floor: CPU_FLOOR });
  const livez = series(g, "/livez p99, idle", "ms", sizes);
  const rss = series(g, "daemon RSS", "MiB", sizes);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < sizes.length; i++) {
      await withHome(async (e) => {
        e.model.respond = (req) => {
          const last = req.body.messages.at(-1);
          if (last.role === "tool") return { content: ["started"] };
          const n = Number(/start (\d+)/.exec(JSON.stringify(last.content))?.[1] ?? 0);
          return {
            toolCalls: Array.from({ length: n }, (_, k) => ({ id: `job-${k}`, name: "run_command", arguments: { command: TICKER, background: true } })),
          };
        };
        const { w } = await coldWindow(e.env);
        const pid = await waitForDaemonPid(e.home);
        for (let left = sizes[i]!; left > 0; left -= JOBS_PER_SESSION) {
          const { sessionId } = await w.request("session/new", { cwd: e.workdir, mcpServers: [] });
          await w.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `start ${Math.min(left, JOBS_PER_SESSION)}` }] });
        }
        if (sizes[i] === 0) {
          // The same work without jobs: a session and a turn.
          const { sessionId } = await w.request("session/new", { cwd: e.workdir, mcpServers: [] });
          await w.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "start 0" }] });
        }
        await scanFinished(e.home, 0);
        await sleep(1000);
        // CPU first, with nothing asked of the daemon: probes 10 ms apart cost it ~40–60 ms/s themselves.
        cpu.samples[i]!.push(await idleCpu(pid));
        livez.samples[i]!.push(await livezP99(e.home, 3000));
        rss.samples[i]!.push(rssMiB(pid));
        await w.close();
      });
    }
  }
  return [cpu, livez, rss];
}

const GROUPS = ["stored", "live", "ledgers", "windows", "jobs"] as const;

/** `only`: the groups to run (`node dist/test/bench/growth.js --only=live,jobs`); all by default. */
export async function growthBench(opts: { quick: boolean; only?: string[] }): Promise<{ table: string; detail: string }> {
  // Start-up is measured as most users' machines start Node: without the certificate bundle.
  const certs = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
  const started = Date.now();
  const rounds = opts.quick ? 1 : 3;
  try {
    const run = (g: (typeof GROUPS)[number]): boolean => !opts.only || opts.only.includes(g);
    const all = [
      ...(run("stored") ? await storedSessions([1, 100, 1000, 10_000], opts.quick ? 2 : 5) : []),
      ...(run("live") ? await liveSessions([1, 100, 1000, 10_000], opts.quick ? 1 : 2) : []),
      ...(run("ledgers") ? await ledgers([1000, 10_000, 100_000], rounds) : []),
      ...(run("windows") ? await windows([1, 10, 50], rounds) : []),
      ...(run("jobs") ? await jobs([0, 16, 64], opts.quick ? 1 : 2) : []),
    ];
    const { table, outliers: found } = growthTable(all);
    const detail =
      `${((Date.now() - started) / 1000).toFixed(0)} s in all; each cell the median of its rounds (n); NODE_EXTRA_CA_CERTS unset for every process spawned.\n` +
      (run("live") ? `${LIVE_HOW}\n` : "") +
      (found.length > 0 ? `Outliers:\n${found.map((o) => `- ${o}`).join("\n")}` : "No outliers.");
    return { table, detail };
  } finally {
    if (certs !== undefined) process.env.NODE_EXTRA_CA_CERTS = certs;
  }
}

if (process.argv[1]?.endsWith("growth.js")) {
  const only = process.argv
    .find((a) => a.startsWith("--only="))
    ?.slice("--only=".length)
    .split(",");
  const unknown = only?.filter((g) => !(GROUPS as readonly string[]).includes(g)) ?? [];
  if (unknown.length > 0) throw new Error(`--only: no group ${unknown.join(", ")} (groups: ${GROUPS.join(", ")})`);
  const r = await growthBench({ quick: process.argv.includes("--quick"), ...(only ? { only } : {}) });
  process.stdout.write(`${r.table}\n${r.detail}\n`);
}
