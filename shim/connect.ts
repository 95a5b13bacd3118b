/**
 * Finds the daemon or starts it. Race-free by construction: the daemon's store lock elects one
 * winner, the losers say "already-running", and the shim never deletes anything; it only retries.
 */
import { mkdirSync, openSync, closeSync, readFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import { HandshakeError, UnixWebSocket } from "./ws-client.js";
import { homeProblem, socketTrustProblem, type Paths } from "../shared/paths.js";
import { storeLockHolder } from "../shared/store-lock.js";
import { spawnDetached, type DetachStrategy } from "./detach.js";
import { HEADER_BUILD, HEADER_ENV, HEADER_MODEL, HEADER_SHIM_PID, HEADER_UMASK, HEADER_WIRE, WIRE_MAJOR } from "../shared/wire.js";
import { BIN_PATH, currentBuild } from "../shared/build.js";
import { httpOverSocket, isRunning, startingDaemon } from "./daemon-process.js";
import { daemonEnvironment } from "../shared/environment.js";
import { errorText } from "../shared/error-text.js";

export const SHIM_BUILD = currentBuild();
/** How long a daemon that is starting gets to answer. */
export const START_BUDGET_MS = 10_000;
/**
 * A daemon that took the connection is running; a busy one (a long replay, a machine with more work
 * than cores) gets as long to answer the upgrade as a starting one. At 3 s, a window whose link does
 * not retry (the in-process one) failed under two suites' load; connectOrStart's retries of a
 * shorter bound ended at the same budget.
 */
const HANDSHAKE_TIMEOUT_MS = START_BUDGET_MS;

/** The daemon cannot be used; the message is the cause, worded for the editor's user. */
export class DaemonUnavailableError extends Error {
  override name = "DaemonUnavailableError";
  constructor(
    message: string,
    /** a short machine-readable kind: config_invalid, home_invalid, untrusted_socket, store_locked, … */
    readonly reason = "daemon_unavailable",
  ) {
    super(message);
  }
}

/**
 * The window's whole environment: the daemon records it for the sessions this window creates and
 * decides there what their tools inherit (secrets are filtered out on that side). Provider keys in
 * it reach only the provider client.
 */
export function envSnapshot(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * This process's umask, to send with the window (the sessions it creates give it to their commands
 * and the files their tools create), leaving the process's own umask 077 from here on (its log
 * files, a daemon it starts). One umask(2) call: reading it alone with `process.umask()` sets it
 * twice (deprecated, DEP0139), and /proc/self/status has it on Linux only.
 */
export function takeUmask(): number {
  return process.umask(0o077);
}

function isMissingDaemon(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  // ENOTDIR: a part of the socket's path is a file (REASONIX_HOME is one); startDaemon says so.
  return code === "ENOENT" || code === "ECONNREFUSED" || code === "ENOTDIR";
}

/** Refuses a socket, or its folder, that this user cannot trust; nothing is sent to it. */
export function assertTrustedSocket(paths: Paths): void {
  const problem = socketTrustProblem(paths);
  if (problem) throw new DaemonUnavailableError(problem, "untrusted_socket");
}

/** What a window says of itself at the upgrade: `--model`, its umask, and its environment (default: this process's). */
export interface WindowOptions {
  model?: string | undefined;
  umask?: number | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Messages to send right behind the upgrade request, asked once connected (UnixWebSocket.open). */
  first?: (() => readonly string[]) | undefined;
}

export function openSocket(paths: Paths, opts: WindowOptions): Promise<UnixWebSocket> {
  try {
    assertTrustedSocket(paths);
  } catch (err) {
    return Promise.reject(err);
  }
  const headers: Record<string, string> = {
    [HEADER_WIRE]: String(WIRE_MAJOR),
    [HEADER_BUILD]: opts.env ? currentBuild(opts.env) : SHIM_BUILD,
    [HEADER_SHIM_PID]: String(process.pid),
    [HEADER_ENV]: Buffer.from(JSON.stringify(envSnapshot(opts.env))).toString("base64"),
  };
  if (opts.model) headers[HEADER_MODEL] = opts.model;
  if (opts.umask !== undefined) headers[HEADER_UMASK] = opts.umask.toString(8).padStart(4, "0");
  return UnixWebSocket.open(paths.socketPath, "/acp", headers, HANDSHAKE_TIMEOUT_MS, opts.first).catch((err: unknown) => {
    if (err instanceof HandshakeError) throw new DaemonUnavailableError(err.message);
    throw err;
  });
}

/** One line on the ready pipe: `ready`, `already-running`, or `error {"message","reason"}`. */
function readyWord(line: string, paths: Paths): "ready" | "already-running" | DaemonUnavailableError {
  if (line === "ready") return "ready";
  if (line === "already-running") return "already-running";
  if (line.startsWith("error ")) {
    try {
      const said = JSON.parse(line.slice("error ".length)) as { message?: unknown; reason?: unknown };
      if (typeof said.message === "string") {
        return new DaemonUnavailableError(said.message, typeof said.reason === "string" ? said.reason : "start_failed");
      }
    } catch {
      // fall through: a garbled word is still a failed start
    }
  }
  return new DaemonUnavailableError(`the daemon said "${line.slice(0, 200)}" during start; see ${paths.logFile}`, "start_failed");
}

/**
 * Node flags the daemon runs with (systemd/reasonix.service names the same). V8 lets a semi-space of
 * the young generation grow to 16 MiB by default, and after a burst of work (a window making a
 * thousand sessions) a shim-started daemon kept all 32 MiB for good: 1,000 idle sessions added
 * 52–56 MiB of RSS, against 22–27 at 8 MiB. At 4 MiB a 100,000-record session/load cost half again
 * as much CPU (replay pages outlived two scavenges and were promoted); at 8 it costs what it did.
 */
export const DAEMON_NODE_FLAGS = ["--max-semi-space-size=8"];

/**
 * Starts `reasonix daemon run` fully detached (shim/detach.ts) and waits for its one line on fd 3.
 * The intermediate process exits at once, so the daemon's death during start shows as EOF on the
 * pipe without a word; a daemon that cannot start writes its cause there first.
 */
export async function startDaemon(paths: Paths, opts: { strategy?: DetachStrategy } = {}): Promise<"ready" | "already-running"> {
  const home = homeProblem(paths);
  if (home) throw new DaemonUnavailableError(home, "home_invalid");
  mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 });
  // The daemon's stdout and stderr: a file of their own, since daemon.log rotates under the daemon.
  const logFd = openSync(paths.stderrFile, "a", 0o600);
  // Tests pin one way of detaching (REASONIX_DETACH=setsid|node) to keep both working.
  const forced = process.env.REASONIX_DETACH;
  const strategy = opts.strategy ?? (forced === "setsid" || forced === "node" ? forced : undefined);
  let child: ChildProcess;
  try {
    child = await spawnDetached([process.execPath, ...DAEMON_NODE_FLAGS, BIN_PATH, "daemon", "run"], {
      stdio: ["ignore", logFd, logFd, "pipe"],
      // Only what a daemon needs: it outlives this window and serves others, so it must not hold this
      // window's keys (they come over the socket with every connection).
      env: { ...daemonEnvironment(process.env), REASONIX_READY_FD: "3" },
      ...(strategy ? { strategy } : {}),
    });
  } finally {
    closeSync(logFd);
  }
  return new Promise((resolve, reject) => {
    const pipe = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
    let said = "";
    let settled = false;
    const timer = setTimeout(
      () => finish(new DaemonUnavailableError(`the daemon did not say it was ready within ${START_BUDGET_MS / 1000} s; see ${paths.logFile}`, "start_timeout")),
      START_BUDGET_MS,
    );
    const finish = (outcome: "ready" | "already-running" | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      pipe.removeAllListeners();
      pipe.on("error", () => undefined);
      pipe.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    pipe.setEncoding("utf8");
    pipe.on("data", (c: string) => {
      said += c;
      const nl = said.indexOf("\n");
      if (nl >= 0) finish(readyWord(said.slice(0, nl), paths));
    });
    pipe.on("error", () => undefined);
    pipe.on("end", () => {
      if (said.length > 0) return finish(readyWord(said, paths));
      // Nobody holds the pipe any more and nothing was said: the daemon died during start, or the
      // intermediate failed before it could start one (its exit code tells which).
      const report = (): void => {
        const code = child.exitCode;
        const why = code ? `the daemon launcher exited with code ${code}` : "the daemon exited during start without saying why";
        finish(new DaemonUnavailableError(`${why}; see ${paths.logFile}`, "start_failed"));
      };
      if (child.exitCode !== null || child.signalCode !== null) report();
      else child.once("exit", report);
    });
    child.once("error", (err) => finish(new DaemonUnavailableError(`cannot start the daemon: ${err.message}`, "start_failed")));
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
    process.stderr.write(
      `reasonix: the running daemon is build ${info.build} (this is ${SHIM_BUILD}) and is busy (${answer.reason}); it stays until idle. Run \`reasonix daemon stop\` to switch now.\n`,
    );
  }
}

/** What to say when no daemon answered within the start budget: who holds the store, if anyone. */
export function noAnswerCause(paths: Paths): { message: string; reason: string } {
  const holder = storeLockHolder(paths.dbDir);
  if (holder && !holder.isDaemon) {
    return { message: `the store at ${paths.dbDir} is locked by process ${holder.pid} (${holder.command})`, reason: "store_locked" };
  }
  if (holder) {
    return {
      message: `a daemon (pid ${holder.pid}) holds the store at ${paths.dbDir} but does not answer on ${paths.socketPath}; stop it (kill ${holder.pid}) or see ${paths.logFile}`,
      reason: "daemon_not_answering",
    };
  }
  return { message: `no daemon answers on ${paths.socketPath}; see ${paths.logFile}`, reason: "start_timeout" };
}

/** Connects to the daemon, starting it when none answers; retries with backoff for ~10 s. */
export async function connectOrStart(paths: Paths, opts: WindowOptions & { autostart?: boolean; strategy?: DetachStrategy }): Promise<UnixWebSocket> {
  // Checked before any byte goes to the socket, the build handover's POST included.
  assertTrustedSocket(paths);
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
        throw new DaemonUnavailableError(`cannot reach the daemon at ${paths.socketPath}: ${errorText(err)}; see ${paths.logFile}`, "daemon_not_answering");
      }
      if (Date.now() > deadline) {
        const cause = noAnswerCause(paths);
        throw new DaemonUnavailableError(`${cause.message} (waited ${START_BUDGET_MS / 1000} s)`, cause.reason);
      }
      if (opts.autostart === false) {
        if (isMissingDaemon(err)) throw new DaemonUnavailableError(`no daemon is running (socket ${paths.socketPath})`, "not_running");
        throw new DaemonUnavailableError(`the daemon on ${paths.socketPath} did not answer: ${errorText(err)}; see ${paths.logFile}`, "daemon_not_answering");
      }
      if (isMissingDaemon(err) && !started) {
        started = true;
        const word = await startDaemon(paths, opts.strategy ? { strategy: opts.strategy } : {});
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
      ? {
          pid: info.pid,
          ...(typeof info.logFile === "string" ? { logFile: info.logFile } : {}),
          ...(typeof info.build === "string" ? { build: info.build } : {}),
        }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The socket the shim's unit talks over: `UnixWebSocket`'s side of it. */
export type ShimSocket = Pick<UnixWebSocket, "send" | "close" | "destroy" | "pause" | "resume" | "on" | "once">;

/** The daemon as a window sees it (shim/acp.ts): how to join it, and how to tell a drop from a death. */
export interface DaemonLink {
  /** The home's log file, named when no daemon can be had. */
  readonly logFile: string;
  /**
   * Opens a window. A rejoin passes false: it never starts a daemon. Rejects with DaemonUnavailableError
   * when none can be had. `first`: messages sent with the upgrade, as WindowOptions.first.
   */
  open(autostart: boolean, first?: () => readonly string[]): Promise<ShimSocket>;
  /** The running daemon's pid and log file, as daemon.json names them. */
  info(): { pid: number; logFile?: string } | undefined;
  /** True when the daemon last joined is still running `ms` from now (it dropped the window on purpose); false once it is gone. */
  stillRunningAfter(ms: number): Promise<boolean>;
  /** Whether a daemon of this home, other than the one last joined, is on its way up (not answering yet). */
  starting?(): boolean;
}

/** The daemon of `paths` on its Unix socket, started when none answers: what `reasonix acp` joins. */
export function unixDaemon(paths: Paths, opts: WindowOptions): DaemonLink {
  let pid: number | undefined;
  return {
    logFile: paths.logFile,
    async open(autostart, first) {
      const socket = await connectOrStart(paths, { ...opts, autostart, first });
      pid = readDaemonInfo(paths)?.pid;
      return socket;
    },
    info: () => readDaemonInfo(paths),
    starting: () => startingDaemon(paths, pid) !== undefined,
    async stillRunningAfter(ms) {
      const deadline = Date.now() + ms;
      while (pid !== undefined && isRunning(pid)) {
        if (Date.now() >= deadline) return true;
        await new Promise((r) => setTimeout(r, 10));
      }
      return false;
    },
  };
}
