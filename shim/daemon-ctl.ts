/** `reasonix daemon start|stop|status|logs`: talks to the daemon over its socket, never its store. */
import { createReadStream, existsSync, readFileSync, statSync, watch } from "node:fs";
import { resolvePaths, type Paths } from "../shared/paths.js";
import { connectOrStart, readDaemonInfo } from "./connect.js";
import { httpOverSocket, isRunning } from "./daemon-process.js";

async function stop(paths: Paths): Promise<void> {
  const info = readDaemonInfo(paths);
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

export async function daemonCommand(sub: string | undefined, args: string[]): Promise<void> {
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
        process.stdout.write(`${JSON.stringify({ running: false, socket: paths.socketPath }, null, 2)}\n`);
        process.exitCode = 3;
      }
      return;
    }
    case "logs":
      return logs(paths, args.includes("-f") || args.includes("--follow"));
    default:
      process.stderr.write("usage: reasonix daemon run|start|stop|status|logs [-f]\n");
      process.exitCode = 2;
  }
}
