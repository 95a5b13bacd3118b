/**
 * Small helpers the shim's commands share for talking to the daemon from outside ACP: whether its
 * process still runs, and a plain HTTP request over its socket. `node:http` is imported on first
 * use, so the `acp` hot path never pays for it.
 */
import { socketTrustProblem, UntrustedPathError, type Paths } from "../shared/paths.js";

export { isRunning } from "../shared/process.js";

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
