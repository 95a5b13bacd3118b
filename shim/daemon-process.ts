/**
 * Small helpers the shim's commands share for talking to the daemon from outside ACP: whether its
 * process still runs, whether one is on its way up, and a plain HTTP request over its socket. `node:http` is imported on first
 * use, so the `acp` hot path never pays for it.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { resolvePaths, socketTrustProblem, UntrustedPathError, type Paths } from "../shared/paths.js";
import { isRunning } from "../shared/process.js";
import { isDaemonCommandLine } from "../shared/store-lock.js";

export { isRunning };

/** One request over the daemon's socket; refuses (UntrustedPathError) a socket this user cannot trust. */
export async function httpOverSocket(paths: Paths, method: string, path: string, timeoutMs = 3000): Promise<{ status: number; body: string }> {
  const problem = socketTrustProblem(paths);
  if (problem) throw new UntrustedPathError(problem);
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: paths.socketPath, method, path, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer from ${paths.socketPath} within ${timeoutMs / 1000} s`)));
    req.on("error", reject);
    req.end();
  });
}

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
