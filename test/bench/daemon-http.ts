/** The daemon's own HTTP endpoints over its Unix socket, as the benchmarks read them. */
import { request } from "node:http";

export function getText(socketPath: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
}

/** One gauge's value from a Prometheus text exposition. */
export function gauge(metrics: string, name: string): number {
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, "m").exec(metrics);
  if (!m) throw new Error(`/metrics has no ${name}`);
  return Number(m[1]);
}
