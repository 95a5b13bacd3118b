/** `reasonix daemon start|stop|status|logs`: talks to the daemon over its socket, never its store. */
import { createReadStream, existsSync, readFileSync, statSync, watch } from "node:fs";
import { homeProblem, resolvePaths, socketTrustProblem, type Paths } from "../shared/paths.js";
import { storeLockHolder } from "../shared/store-lock.js";
import { connectOrStart, noAnswerCause, readDaemonInfo } from "./connect.js";
import { httpOverSocket, isRunning } from "./daemon-process.js";
import { errorText } from "../shared/error-text.js";

/**
 * Why no daemon answers, as the daemon itself would say it: the cheap checks again (home, socket
 * folder, config, the store's lock holder), then what the last failed start recorded for causes
 * only opening the store can find (a damaged store). A recorded cause that a check above can see
 * again, and no longer sees, is stale and ignored.
 */
async function whyNotRunning(paths: Paths): Promise<{ reason: string; kind: string }> {
  const home = homeProblem(paths);
  if (home) return { reason: home, kind: "home_invalid" };
  const trust = socketTrustProblem(paths);
  if (trust) return { reason: trust, kind: "untrusted_socket" };
  try {
    const { readConfigFile, resolveConfig } = await import("../daemon/config/config.js");
    resolveConfig(readConfigFile(paths.configFile), process.env);
  } catch (err) {
    return { reason: errorText(err), kind: "config_invalid" };
  }
  if (storeLockHolder(paths.dbDir)) {
    const held = noAnswerCause(paths);
    return { reason: held.message, kind: held.reason };
  }
  try {
    const last = JSON.parse(readFileSync(paths.startErrorFile, "utf8")) as { message?: unknown; reason?: unknown };
    const rechecked = ["home_invalid", "untrusted_socket", "config_invalid", "store_locked"];
    if (typeof last.message === "string" && !rechecked.includes(String(last.reason))) {
      return { reason: last.message, kind: String(last.reason ?? "start_failed") };
    }
  } catch {
    // no failed start on record
  }
  return { reason: "no daemon is running", kind: "not_running" };
}

async function stop(paths: Paths): Promise<void> {
  const info = readDaemonInfo(paths);
  const trust = socketTrustProblem(paths);
  if (trust) {
    process.stderr.write(`reasonix daemon: ${trust}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    await httpOverSocket(paths, "POST", "/admin/shutdown");
  } catch {
    process.stdout.write("reasonix daemon: not running\n");
    return;
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const gone = info ? !isRunning(info.pid) : !existsSync(paths.socketPath);
    if (gone) {
      process.stdout.write(`reasonix daemon: stopped${info ? ` (pid ${info.pid})` : ""}\n`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.stderr.write(`reasonix daemon: still running after 10 s; see ${paths.logFile}\n`);
  process.exitCode = 1;
}

async function logs(paths: Paths, follow: boolean): Promise<void> {
  if (!existsSync(paths.logFile)) {
    process.stderr.write(`reasonix daemon: no log yet at ${paths.logFile}\n`);
    return;
  }
  const text = readFileSync(paths.logFile, "utf8");
  process.stdout.write(text.split("\n").slice(-200).join("\n"));
  if (!follow) return;
  let offset = statSync(paths.logFile).size;
  watch(paths.logFile, () => {
    const size = statSync(paths.logFile).size;
    if (size <= offset) return;
    createReadStream(paths.logFile, { start: offset, end: size - 1 }).pipe(process.stdout, { end: false });
    offset = size;
  });
}

export async function daemonCommand(sub: string | undefined, follow = false): Promise<void> {
  const paths = resolvePaths();
  switch (sub) {
    case "start": {
      const ws = await connectOrStart(paths, {});
      ws.close();
      const info = readDaemonInfo(paths);
      process.stdout.write(`reasonix daemon: running (pid ${info?.pid ?? "?"}, socket ${paths.socketPath})\n`);
      return;
    }
    case "stop":
      return stop(paths);
    case "status": {
      try {
        const { body } = await httpOverSocket(paths, "GET", "/status");
        process.stdout.write(`${JSON.stringify(JSON.parse(body), null, 2)}\n`);
      } catch {
        const why = await whyNotRunning(paths);
        process.stdout.write(
          `${JSON.stringify({ running: false, socket: paths.socketPath, logFile: paths.logFile, reason: why.reason, kind: why.kind }, null, 2)}\n`,
        );
        process.exitCode = 3;
      }
      return;
    }
    case "logs":
      return logs(paths, follow);
    default:
      process.stderr.write("usage: reasonix daemon run|start|stop|status|logs [-f]\n");
      process.exitCode = 2;
  }
}
