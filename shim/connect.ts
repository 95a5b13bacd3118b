/**
 * Finds the daemon or starts it. Race-free by construction: the daemon's store lock elects one
 * winner, the losers say "already-running", and the shim never deletes anything; it only retries.
 */
import { mkdirSync, openSync, closeSync, readFileSync } from "node:fs";
import { HandshakeError, UnixWebSocket } from "./ws-client.js";
import type { Paths } from "../shared/paths.js";
import { ENV_ALLOWLIST, HEADER_BUILD, HEADER_ENV, HEADER_MODEL, HEADER_SHIM_PID, HEADER_WIRE, WIRE_MAJOR } from "../shared/wire.js";
import { BIN_PATH, currentBuild } from "../shared/build.js";
import { httpOverSocket, isRunning } from "./daemon-process.js";

export const SHIM_BUILD = currentBuild();
const HANDSHAKE_TIMEOUT_MS = 3000;
const START_BUDGET_MS = 10_000;

export class DaemonUnavailableError extends Error {
  override name = "DaemonUnavailableError";
}

/** The environment a session opened from this shim sees: the allowlist plus provider variables. */
export function envSnapshot(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    if ((ENV_ALLOWLIST as readonly string[]).includes(k) || /^[A-Z0-9_]+_(API_KEY|BASE_URL)$/.test(k)) out[k] = v;
  }
  return out;
}

function isMissingDaemon(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ECONNREFUSED";
}

export function openSocket(paths: Paths, opts: { model?: string | undefined }): Promise<UnixWebSocket> {
  const headers: Record<string, string> = {
    [HEADER_WIRE]: String(WIRE_MAJOR),
    [HEADER_BUILD]: SHIM_BUILD,
    [HEADER_SHIM_PID]: String(process.pid),
    [HEADER_ENV]: Buffer.from(JSON.stringify(envSnapshot())).toString("base64"),
  };
  if (opts.model) headers[HEADER_MODEL] = opts.model;
  return UnixWebSocket.open(paths.socketPath, "/acp", headers, HANDSHAKE_TIMEOUT_MS).catch((err: unknown) => {
    if (err instanceof HandshakeError) throw new DaemonUnavailableError(err.message);
    throw err;
  });
}

/** Spawns `reasonix daemon run` detached and waits for its one-word answer on fd 3. */
export async function startDaemon(paths: Paths): Promise<"ready" | "already-running"> {
  // Only a cold start spawns anything; a warm start never pays for loading child_process.
  const { spawn } = await import("node:child_process");
  mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
  const logFd = openSync(paths.logFile, "a", 0o600);
  const child = spawn(process.execPath, [BIN_PATH, "daemon", "run"], {
    detached: true,
    stdio: ["ignore", logFd, logFd, "pipe"],
    env: { ...process.env, REASONIX_READY_FD: "3" },
  });
  closeSync(logFd);
  return new Promise((resolve, reject) => {
    const pipe = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
    let said = "";
    const finish = (err: Error | undefined, word?: "ready" | "already-running"): void => {
      pipe.removeAllListeners();
      child.removeAllListeners();
      pipe.destroy();
      child.unref();
      if (err) reject(err);
      else resolve(word!);
    };
    pipe.setEncoding("utf8");
    pipe.on("data", (c: string) => {
      said += c;
      if (said.includes("ready\n")) finish(undefined, said.startsWith("already") ? "already-running" : "ready");
    });
    pipe.on("error", () => undefined);
    child.once("error", (err) => finish(err));
    child.once("exit", (code) => {
      if (said.startsWith("already")) finish(undefined, "already-running");
      else finish(new DaemonUnavailableError(`the daemon exited during start (code ${code}); see ${paths.logFile}`));
    });
  });
}

/** Asks the daemon to hand over to this build; an unreachable or odd answer counts as "no". */
async function postDrain(paths: Paths): Promise<{ draining?: boolean; reason?: string }> {
  try {
    return JSON.parse((await httpOverSocket(paths, "POST", "/admin/drain", 2000)).body) as { draining?: boolean; reason?: string };
  } catch {
    return {};
  }
}

/**
 * A daemon of another build (an upgrade happened) is replaced when it is idle; a busy one is kept,
 * with one line on stderr saying how to switch.
 */
async function replaceStaleDaemon(paths: Paths): Promise<void> {
  const info = readDaemonInfo(paths);
  if (!info?.build || info.build === SHIM_BUILD) return;
  const answer = await postDrain(paths);
  if (answer.draining) {
    const deadline = Date.now() + 5000;
    while (isRunning(info.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return;
  }
  if (answer.reason) {
    process.stderr.write(`reasonix: the running daemon is build ${info.build} (this is ${SHIM_BUILD}) and is busy (${answer.reason}); it stays until idle. Run \`reasonix daemon stop\` to switch now.\n`);
  }
}

/** Connects to the daemon, starting it when none answers; retries with backoff for ~10 s. */
export async function connectOrStart(paths: Paths, opts: { model?: string | undefined; autostart?: boolean }): Promise<UnixWebSocket> {
  if (opts.autostart !== false) await replaceStaleDaemon(paths);
  const deadline = Date.now() + START_BUDGET_MS;
  let delay = 25;
  let started = false;
  for (;;) {
    try {
      return await openSocket(paths, opts);
    } catch (err) {
      if (err instanceof DaemonUnavailableError) throw err;
      if (!isMissingDaemon(err) && Date.now() > deadline) {
        throw new DaemonUnavailableError(`cannot reach the daemon at ${paths.socketPath}: ${(err as Error).message}; see ${paths.logFile}`);
      }
      if (Date.now() > deadline) {
        throw new DaemonUnavailableError(`the daemon did not come up within ${START_BUDGET_MS / 1000} s; see ${paths.logFile}`);
      }
      if (opts.autostart === false) throw new DaemonUnavailableError(`no daemon is running (socket ${paths.socketPath})`);
      if (isMissingDaemon(err) && !started) {
        started = true;
        const word = await startDaemon(paths);
        if (word === "ready") continue;
      }
      await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
      delay = Math.min(delay * 2, 500);
    }
  }
}

export function readDaemonInfo(paths: Paths): { pid: number; logFile?: string; build?: string } | undefined {
  try {
    const info = JSON.parse(readFileSync(paths.daemonInfoFile, "utf8")) as { pid?: unknown; logFile?: unknown; build?: unknown };
    return typeof info.pid === "number"
      ? { pid: info.pid, ...(typeof info.logFile === "string" ? { logFile: info.logFile } : {}), ...(typeof info.build === "string" ? { build: info.build } : {}) }
      : undefined;
  } catch {
    return undefined;
  }
}
