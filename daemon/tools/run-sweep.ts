/**
 * Finding a sandboxed command again after whoever spawned it killed it. bwrap's `--die-with-parent`
 * leaves a window: with `--unshare-pid` the outer bwrap clones an inner one (init of the command's
 * pid namespace) that sets its own parent-death signal only once the mounts are made, a few ms
 * later. An outer bwrap killed before that leaves the inner orphaned, and with `--new-session`
 * (editor terminals) out of the killed process group too: the command then runs to its end with
 * nobody watching (40 spawns killed 0–7 ms after start: 13 ran on). Each such run carries a marker
 * no other run has in bwrap's own arguments (`--unsetenv REASONIX_RUN_<id>`, a no-op: the command's
 * environment is unchanged), which the inner bwrap shares from its clone; on the kill paths the
 * daemon SIGKILLs this user's processes carrying it. Killing the inner bwrap ends its pid namespace
 * and so every process of the command. Linux /proc only; elsewhere there is no bwrap to sweep.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";

const MARK_OPTION = "--unsetenv";
const MARK_PREFIX = "REASONIX_RUN_";
/**
 * Rounds of look-and-kill, a process cloned while a round looked showing in the next one, for as
 * long as it takes, up to a bound in time, not in rounds: on a loaded machine a walk of /proc and
 * the killed processes' exit each take longer, and 40 rounds (~0.5 s quiet) once ended while the
 * killed sandbox was still exiting.
 */
const MAX_SWEEP_MS = 5000;
const ROUND_PAUSE_MS = 10;

/** A fresh run id: 96 random bits, so no two runs (of any session or daemon) share one. */
export function newRunId(): string {
  return randomBytes(12).toString("hex");
}

/** bwrap's arguments that mark its processes with `runId` (they go before the `--`). */
export function runMarkArgs(runId: string): string[] {
  return [MARK_OPTION, MARK_PREFIX + runId];
}

/** Whether a command line (NUL-separated, as /proc gives it) carries the run's mark among bwrap's own options. */
export function carriesMark(cmdline: string, runId: string): boolean {
  const argv = cmdline.split("\0");
  const mark = MARK_PREFIX + runId;
  for (let i = 1; i < argv.length - 1; i++) {
    if (argv[i] === "--") return false;
    if (argv[i] === MARK_OPTION && argv[i + 1] === mark) return true;
  }
  return false;
}

/** This user's live processes whose command line carries the run's mark; never this process. */
export function markedPids(runId: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const mark = MARK_PREFIX + runId;
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // A zombie's command line reads empty: it is already dead.
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "latin1");
      if (!cmdline.includes(mark) || !carriesMark(cmdline, runId)) continue;
      // The owner of /proc/<pid> is the process's effective user: another user's process is never touched.
      if (uid === undefined || statSync(`/proc/${entry}`).uid === uid) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/** Exited (a zombie counts) or no longer there. */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat[stat.lastIndexOf(")") + 2] === "Z";
  } catch {
    return true;
  }
}

/**
 * SIGKILLs every process of the run that is left, until a look finds none and each one signalled
 * has exited (the inner bwrap does so only once its pid namespace is empty), or 5 s have passed.
 * Costs one walk of /proc per round; called only when a command is cancelled, timed out or killed.
 * Resolves with the number of processes it signalled.
 */
export async function sweepRun(runId: string): Promise<number> {
  const killed = new Set<number>();
  for (const deadline = Date.now() + MAX_SWEEP_MS; Date.now() < deadline; ) {
    const pids = markedPids(runId);
    if (pids.length === 0 && [...killed].every(gone)) return killed.size;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed.add(pid);
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, ROUND_PAUSE_MS));
  }
  return killed.size;
}
