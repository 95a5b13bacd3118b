/**
 * What else the machine is doing: CPU time of the whole machine (/proc/stat) against the CPU time of
 * the processes a benchmark owns, so a run can say how much of the machine others took meanwhile.
 * Linux only; elsewhere every figure reads 0 and the check always passes. And the machine's floor
 * for a start: a bare `node -e`.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";

const TICK_MS = 10; // USER_HZ is 100 on every Linux Node supports

function machineBusyMs(): number {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + (f[7] ?? 0);
    return busy * TICK_MS;
  } catch {
    return 0;
  }
}

/** utime+stime (and, for our own process, its waited-for children's) of a pid, in ms. */
export function processCpuMs(pid: number | "self"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    // fields from state (index 0 here = field 3): utime=14, stime=15, cutime=16, cstime=17
    const own = f[11]! + f[12]!;
    return (pid === "self" ? own + f[13]! + f[14]! : own) * TICK_MS;
  } catch {
    return 0;
  }
}

export interface Noise {
  /** cores' worth of CPU that processes outside the benchmark used, on average over the window */
  othersCores: number;
  seconds: number;
}

/**
 * Opens a window; `stop()` says how busy the rest of the machine was during it. Our own process and
 * its reaped children count as ours, and so do `pids` (a detached daemon), measured from the start.
 */
export function noiseWindow(pids: number[] = []): { stop(): Noise } {
  const t0 = process.hrtime.bigint();
  const m0 = machineBusyMs();
  const self0 = processCpuMs("self");
  const p0 = pids.map((p) => processCpuMs(p));
  return {
    stop() {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      let ours = processCpuMs("self") - self0;
      pids.forEach((p, i) => (ours += processCpuMs(p) - p0[i]!));
      const others = Math.max(0, machineBusyMs() - m0 - ours);
      return { othersCores: ms > 0 ? others / ms : 0, seconds: ms / 1000 };
    },
  };
}

export const CORES = cpus().length;

/**
 * A bare `node -e` start in ms: spawn → exit, or with `line`, spawn → its first stdout byte (the
 * event an agent's answer is timed by). Either way it resolves once the process has exited, so the
 * next subject does not start beside its teardown, a cost that would land on that subject's figure
 * and never on the floor's (docs/benchmarks.md, 2026-12-03).
 */
export function nodeFloor(opts: { line?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const ms = (): number => Number(process.hrtime.bigint() - t0) / 1e6;
    let firstByte = NaN;
    const child = spawn(process.execPath, ["-e", opts.line ? "process.stdout.write('\\n')" : "0"], {
      env: opts.env ?? process.env,
      stdio: ["ignore", opts.line ? "pipe" : "ignore", "ignore"],
    });
    if (opts.line) child.stdout!.once("data", () => (firstByte = ms()));
    child.once("exit", () => resolve(opts.line ? firstByte : ms()));
    child.once("error", reject);
  });
}
