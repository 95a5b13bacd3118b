/**
 * The daemon as an object (`createDaemon`): win the store lock, bind the socket, serve until closed.
 * `reasonix daemon run` (`runDaemon`) wraps it with what belongs to a process of its own: the umask,
 * the ready pipe, signals, the exit. Tests create the same object inside their own process.
 * Heavy modules (openai, MCP) load later, on first use, so the first `initialize` is answered fast.
 */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolvePaths, type Paths } from "../shared/paths.js";
import { basicEnvironment, looksSecret } from "../shared/environment.js";
import { PACKAGE_VERSION, WIRE_MAJOR } from "../shared/wire.js";
import { currentBuild } from "../shared/build.js";
import type { DaemonConfig } from "./config/config.js";
import { liveConfig } from "./config/live.js";
import { closeLogger, createLogger, setRotation, type Logger } from "./log/log.js";
import { recordCrashes } from "./log/crash.js";
import { Store, StoreDamagedError } from "./store/store.js";
import {
  AlreadyRunningError,
  asStartupError,
  classifyStoreError,
  clearStartError,
  loadConfig,
  prepareFolders,
  recordStartError,
  StartupError,
  tellLauncher,
} from "./startup.js";
import { isIdle, SessionManager, type SessionDeps } from "./sessions/index.js";
import { afterFirstRequests, type Background } from "./background.js";
import { modelFactory } from "./provider/factory.js";
import { SearchThreads } from "./tools/builtin/search-thread.js";
import { sandboxProber } from "./tools/sandbox-probe.js";
import type { DaemonState } from "./server/state.js";
import type { FastifyInstance } from "fastify";
import { listen, ListenError, type Listeners, removeSocket, unlisten } from "./server/listeners.js";

export interface DaemonOptions {
  paths: Paths;
  /**
   * The daemon's own environment: config overrides, log level, the provider keys a window did not
   * send. Nothing below reads process.env, so a daemon created inside another program sees only this.
   */
  env: NodeJS.ProcessEnv;
  /** Resolved from config.json and `env` when absent. */
  config?: DaemonConfig;
  /** The caller's logger, left open on close; by default the daemon opens and closes its log file. */
  log?: Logger;
  /**
   * A listening socket handed over by systemd (socket activation, LISTEN_FDS): served as it is, never
   * bound, never removed; systemd owns the path.
   */
  listenFd?: number;
}

/** The socket systemd passed this process, if any (sd_listen_fds: LISTEN_PID must be ours). */
export function passedSocket(env: NodeJS.ProcessEnv): number | undefined {
  if (env.LISTEN_PID !== String(process.pid) || env.LISTEN_FDS !== "1") return undefined;
  return 3;
}

export interface Daemon {
  readonly state: DaemonState;
  readonly app: FastifyInstance;
  /** host:port of the loopback TCP listener, when config.listen asked for one */
  readonly tcpAddress: string | undefined;
  /** Settles with the reason once the daemon has stopped, whoever asked (close, /admin/shutdown, idle). */
  readonly closed: Promise<string>;
  /** Stops the daemon: listeners closed, sessions stopped, store closed, socket and daemon.json removed. */
  close(reason?: string): Promise<string>;
}

function writeDaemonInfo(paths: Paths, info: object): void {
  const tmp = `${paths.daemonInfoFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(info, null, 2), { mode: 0o600 });
  renameSync(tmp, paths.daemonInfoFile);
}

/** What a sandboxed command must not see: every folder of the daemon's own. */
function daemonDirs(paths: Paths): string[] {
  return [...new Set([paths.configDir, paths.stateDir, paths.runtimeDir, paths.socketDir])];
}

/** The sessions' private /tmp folders, in the state folder (hidden from commands like the rest of it). */
function sandboxTmpDir(paths: Paths): string {
  return join(paths.stateDir, "sandbox-tmp");
}

/** A stop waits this long for sessions to wind down (a tool ignoring its cancel); then it goes on. */
const SESSION_STOP_BUDGET_MS = 5000;

/**
 * Starts a daemon on `paths`. Throws a StartupError naming the cause (also logged and recorded for
 * `reasonix daemon status`), or AlreadyRunningError when another daemon holds the store.
 */
export async function createDaemon(options: DaemonOptions): Promise<Daemon> {
  const { paths, env } = options;
  prepareFolders(paths);
  const ownLog = options.log === undefined;
  const log = options.log ?? createLogger(paths.logFile, env.REASONIX_LOG_LEVEL ?? "info");
  let store: Store | undefined;
  try {
    const config = options.config ?? loadConfig(paths, env);
    if (ownLog) setRotation(log, { maxBytes: config.logMaxBytes, keep: config.logFiles });
    try {
      store = await Store.open(paths.dbDir, log);
    } catch (err) {
      const verdict = classifyStoreError(err, paths.dbDir);
      throw verdict === "already-running" ? new AlreadyRunningError(paths.dbDir) : verdict;
    }
    const daemon = await serve(paths, env, config, store, log, ownLog, options.listenFd);
    clearStartError(paths);
    return daemon;
  } catch (err) {
    let failure = err;
    if (!(err instanceof AlreadyRunningError)) {
      // Whatever stopped the start is recorded in words for `reasonix daemon status`.
      const cause = asStartupError(err);
      log.error({ err, reason: cause.reason }, `cannot start: ${cause.message}`);
      recordStartError(paths, cause);
      failure = cause;
    }
    await store?.close().catch(() => undefined);
    if (ownLog) await closeLogger(log);
    throw failure;
  }
}

/** `reasonix daemon run`: the daemon plus what a process of its own needs. */
export async function runDaemon(): Promise<void> {
  process.umask(0o077);
  // Our stdout and stderr are the log file: a full disk must not turn a diagnostic into a crash.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  const paths = resolvePaths();
  recordCrashes(paths.crashFile);
  let daemon: Daemon;
  try {
    const listenFd = passedSocket(process.env);
    daemon = await createDaemon({ paths, env: process.env, ...(listenFd !== undefined ? { listenFd } : {}) });
  } catch (err) {
    if (err instanceof AlreadyRunningError) {
      process.stderr.write("reasonix daemon: already running\n");
      tellLauncher("already-running");
      return;
    }
    // The launcher gets the cause in words, not a bare exit code.
    const cause = asStartupError(err);
    process.stderr.write(`reasonix daemon: ${cause.message}\n`);
    tellLauncher(cause);
    process.exitCode = 2;
    // Half-started pieces (a listener, a timer) must not keep a failed daemon around.
    setTimeout(() => process.exit(2), 2000).unref();
    return;
  }
  const { log } = daemon.state.services;
  const exposed = Object.keys(process.env).filter(looksSecret);
  if (exposed.length > 0) {
    // Started by hand from a shell: those values sit in /proc/<pid>/environ for the daemon's life.
    const warning = `this daemon's process environment holds ${exposed.sort().join(", ")}, readable in /proc/${process.pid}/environ by your other programs; start it with \`reasonix daemon start\` or systemd and keep keys in ${paths.envFile} or \`reasonix setup\``;
    log.warn({ names: exposed }, warning);
    process.stderr.write(`reasonix daemon: ${warning}\n`);
  }
  // A stray rejection somewhere in one session must not take every other session down with it.
  process.on("unhandledRejection", (err) => log.error({ err }, "unhandled rejection"));
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    process.on(sig, () => daemon.state.requestShutdown(sig));
  }
  void daemon.closed.then(() => process.exit(0));
  tellLauncher("ready");
  process.stderr.write(`reasonix daemon: ready (pid ${process.pid}, socket ${paths.socketPath})\n`);
}

/** Everything a running daemon holds that its stop must undo, in the order it was made. */
interface Serving {
  paths: Paths;
  store: Store;
  log: Logger;
  ownLog: boolean;
  listenFd: number | undefined;
  state: DaemonState;
  sessions: SessionManager;
  listeners: Listeners;
  idleTimer: NodeJS.Timeout;
  background: Background;
}

/** The sessions' view of this daemon: its configuration as it is now, its model factory, its tools. */
function sessionDeps(paths: Paths, env: NodeJS.ProcessEnv, store: Store, log: Logger, config: () => DaemonConfig, list: () => SessionManager): SessionDeps {
  // Probed once serving (serve()), before any window is likely to ask; a session's first command
  // waits for the answer, and starts the probe itself if it comes first.
  const sandbox = sandboxProber(env.PATH);
  return {
    store,
    log,
    config,
    configDir: paths.configDir,
    maxSteps: () => config().maxSteps,
    permissionTimeoutMs: () => config().permissionTimeoutSeconds * 1000,
    goalBounds: () => config().goal,
    createModel: modelFactory(config, { daemonEnv: env, envFile: paths.envFile, credentialsFile: paths.credentialsFile }),
    listSessions: async (cwd) => (await list().list(cwd, undefined)).sessions,
    sandbox,
    hiddenDirs: daemonDirs(paths),
    sandboxTmp: sandboxTmpDir(paths),
    // Read at each call, so a changed config.json applies to the next one; this daemon's alone.
    tools: {
      editorTimeoutMs: () => config().editorTimeoutSeconds * 1000,
      searches: new SearchThreads(() => config().searchTimeoutSeconds * 1000),
    },
  };
}

/**
 * Leaves when nothing has been attached or running for `idleShutdownSeconds`, or, an upgraded install
 * being there, at the first idle moment (the next shim would replace this daemon anyway).
 */
function watchIdle(state: DaemonState, idleMs: number, env: NodeJS.ProcessEnv): NodeJS.Timeout {
  let idleSince = Date.now();
  const timer = setInterval(
    () => {
      const busy = state.connections > 0 || !state.idle();
      if (busy) idleSince = Date.now();
      else if (idleMs > 0 && Date.now() - idleSince >= idleMs) state.requestShutdown("idle");
      else if (currentBuild(env) !== state.build) state.requestShutdown(`a newer build (${currentBuild(env)}) is installed`);
    },
    Math.min(5000, Math.max(250, idleMs / 4)),
  );
  timer.unref();
  return timer;
}

/**
 * Every live session is stopped: a running turn is cancelled and its commands, terminals and MCP
 * servers end with it, instead of outliving the daemon as orphans in their own process groups.
 */
async function stopSessions(sessions: SessionManager, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => (timer = setTimeout(resolve, SESSION_STOP_BUDGET_MS)));
  const stops = sessions.liveSessions().map((s) => s.stop().catch((err: unknown) => log.warn({ sessionId: s.id, err }, "stopping a session failed")));
  await Promise.race([Promise.all(stops), budget]);
  clearTimeout(timer);
  await sessions.shutdown();
}

async function stopServing(d: Serving, reason: string): Promise<string> {
  const { log, paths } = d;
  log.info({ reason }, "daemon stopping");
  d.state.draining = true;
  clearInterval(d.idleTimer);
  try {
    await unlisten(d.listeners, paths);
    await d.background.stop();
    await stopSessions(d.sessions, log);
    await d.store.close();
  } catch (err) {
    log.error({ err }, "error while stopping");
  }
  removeSocket(paths, d.listenFd);
  rmSync(paths.daemonInfoFile, { force: true });
  log.info("daemon stopped");
  if (d.ownLog) await closeLogger(log);
  else log.flush();
  return reason;
}

async function serve(
  paths: Paths,
  env: NodeJS.ProcessEnv,
  initial: DaemonConfig,
  store: Store,
  log: Logger,
  ownLog: boolean,
  listenFd: number | undefined,
): Promise<Daemon> {
  const currentConfig = liveConfig(paths.configFile, initial, env, log);
  // What the sandboxed commands of a daemon that did not stop (killed, crashed) left in their /tmp:
  // this daemon holds the home's lock, so no other uses the folder.
  rmSync(sandboxTmpDir(paths), { recursive: true, force: true });
  const deps = sessionDeps(paths, env, store, log, currentConfig, () => sessions);
  const sessions = new SessionManager(store, deps, log);
  try {
    await sessions.recover();
  } catch (err) {
    // Damage met while recovering is recorded (the store notes it for /status, and a load that reads
    // it says so); the sessions that can still be read are served rather than none.
    if (!(err instanceof StoreDamagedError)) throw err;
    log.error({ err }, "recovery stopped at damaged data");
  }
  sessions.startIdleUnload();
  // config `retention`: a first sweep once serving, then periodically; never blocks the start.
  sessions.startRetention();

  let serving: Serving | undefined;
  let shuttingDown: Promise<string> | undefined;
  let stopped!: (reason: string) => void;
  const closed = new Promise<string>((resolve) => (stopped = resolve));
  const state: DaemonState = {
    services: { sessions, config: currentConfig, paths, log, version: PACKAGE_VERSION },
    store,
    startedAt: Date.now(),
    build: currentBuild(env),
    draining: false,
    connections: 0,
    windowBacklogBytes: initial.windowBacklogBytes,
    idle: () => sessions.liveSessions().every((s) => isIdle(s.activity())),
    plainWindowEnv: basicEnvironment(env),
    sandbox: deps.sandbox,
    searchThreads: () => deps.tools.searches.running,
    requestShutdown: (reason) => {
      if (!serving || shuttingDown) return;
      shuttingDown = stopServing(serving, reason).then((r) => {
        stopped(r);
        return r;
      });
    },
  };

  let listeners: Listeners;
  try {
    listeners = await listen(state, paths, initial, listenFd);
  } catch (err) {
    throw err instanceof ListenError ? new StartupError(err.message, "listen_failed") : err;
  }
  writeDaemonInfo(paths, {
    pid: process.pid,
    build: state.build,
    wire: WIRE_MAJOR,
    socket: paths.socketPath,
    ...(listeners.tcp ? { tcp: listeners.tcp.address } : {}),
    logFile: paths.logFile,
    startedAt: new Date(state.startedAt).toISOString(),
  });
  const background = afterFirstRequests(state, sessions, store);
  // Spawning the probe costs a fork of this process: it waits until the launcher has been told
  // "ready" (that happens in this same turn of the event loop).
  setImmediate(() => state.draining || void deps.sandbox());
  const idleTimer = watchIdle(state, initial.idleShutdownSeconds * 1000, env);
  serving = { paths, store, log, ownLog, listenFd, state, sessions, listeners, idleTimer, background };
  log.info({ socket: paths.socketPath, build: state.build }, "daemon ready");

  return {
    state,
    app: listeners.app,
    tcpAddress: listeners.tcp?.address,
    closed,
    close: (reason = "closed by its owner") => {
      state.requestShutdown(reason);
      return shuttingDown!;
    },
  };
}
