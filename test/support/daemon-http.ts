/**
 * The daemon's own HTTP endpoints over its Unix socket (/status, /metrics, /livez), read the way
 * `reasonix daemon status` reads them, without a process per read: for tests that poll and for the
 * benchmarks. Works for a daemon in this process or in its own.
 */
import { request } from "node:http";
import { resolvePaths } from "../../shared/paths.js";

export function getText(socketPath: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      // An error answer rejects with its status and body, so a test sees the daemon's own cause.
      res.on("end", () => ((res.statusCode ?? 0) >= 400 ? reject(new Error(`GET ${path}: ${res.statusCode} ${body}`)) : resolve(body)));
    });
    req.on("error", reject);
    req.end();
  });
}

/** `path` from the daemon of a REASONIX_HOME, over its socket. */
export function daemonGet(home: string, path: string): Promise<string> {
  return getText(resolvePaths({ REASONIX_HOME: home }).socketPath, path);
}

/** One gauge's value from a Prometheus text exposition. */
export function gauge(metrics: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, "m").exec(metrics);
  if (!m) throw new Error(`/metrics has no ${name}`);
  return Number(m[1]);
}
