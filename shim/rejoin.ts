/**
 * Waiting for a daemon to come back after the shim lost it (a supervisor restarting it). A restart
 * is a restart delay (the shipped unit's `RestartSec=2`) and then a start, which on a busy machine
 * takes seconds by itself (3 to 6 s measured at a load of 12 to 19 on 2 cores, most of it loading
 * the daemon's modules). So the wait is in two parts: a short window for a restart to show itself
 * (a daemon answering, or a `reasonix daemon run` of this store running), and then the same budget
 * a cold start gets for a daemon that is visibly starting.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { resolvePaths, type Paths } from "../shared/paths.js";
import { isDaemonCommandLine } from "../shared/store-lock.js";
import type { UnixWebSocket } from "./ws-client.js";
import { connectOrStart, START_BUDGET_MS, type WindowOptions } from "./connect.js";
import { isRunning } from "./daemon-process.js";

/** How long after the loss a restart has to show itself. */
export const RECONNECT_WINDOW_MS = 3000;
const POLL_MS = 200;

/**
 * A `reasonix daemon run` process of this user, other than `lost`, whose environment resolves to the
 * same store: a daemon on its way up. Its command line is there from the moment it is executed, long
 * before it can answer. Linux only (`/proc`); elsewhere none is ever seen.
 */
export function startingDaemon(paths: Paths, lost?: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === lost || Number(entry) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!isDaemonCommandLine(args)) continue;
      // Another user's process is unreadable here and skipped; a relative home is the process's own.
      const env: Record<string, string> = {};
      for (const pair of readFileSync(`/proc/${entry}/environ`, "utf8").split("\0")) {
        const at = pair.indexOf("=");
        if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
      }
      if (env.REASONIX_HOME && !isAbsolute(env.REASONIX_HOME)) env.REASONIX_HOME = resolve(readlinkSync(`/proc/${entry}/cwd`), env.REASONIX_HOME);
      if (resolvePaths(env).dbDir === paths.dbDir && isRunning(Number(entry))) return Number(entry);
    } catch {
      // it ended while we looked
    }
  }
  return undefined;
}

/**
 * Connects to a daemon that comes back: one that answers within the window, or one seen starting
 * within it, for as long as the start budget from when it was first seen while it is still running.
 * Undefined when none came, or when `stop()` says the editor has left meanwhile.
 */
export async function rejoinDaemon(paths: Paths, opts: WindowOptions, lost: number | undefined, stop: () => boolean): Promise<UnixWebSocket | undefined> {
  const windowEnds = Date.now() + RECONNECT_WINDOW_MS;
  let budgetEnds: number | undefined;
  while (!stop()) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    try {
      return await connectOrStart(paths, { ...opts, autostart: false });
    } catch {
      // not back yet
    }
    const now = Date.now();
    const starting = startingDaemon(paths, lost) !== undefined;
    if (starting) budgetEnds ??= now + START_BUDGET_MS;
    if (now >= windowEnds && !(starting && budgetEnds !== undefined && now < budgetEnds)) return undefined;
  }
  return undefined;
}
