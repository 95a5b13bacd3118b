/**
 * The daemon as an object (`createDaemon`): win the store lock, bind the socket, serve until closed.
 * `reasonix daemon run` (`runDaemon`) wraps it with what belongs to a process of its own: the umask,
 * the ready pipe, signals, the exit. Tests create the same object inside their own process.
 * Heavy modules (openai, MCP) load later, on first use, so the first `initialize` is answered fast.
 */
import { renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { resolvePaths, type Paths } from "../shared/paths.js";
import { basicEnvironment, looksSecret } from "../shared/environment.js";
import { PACKAGE_VERSION, WIRE_MAJOR } from "../shared/wire.js";
import { currentBuild } from "../shared/build.js";
import type { DaemonConfig } from "./config/config.js";
import { liveConfig } from "./config/live.js";
import { closeLogger, createLogger, setRotation, type Logger } from "./log/log.js";
import { recordCrashes } from "./log/crash.js";
import { Store, StoreDamagedError } from "./store/store.js";
import { scanStore } from "./store/integrity.js";
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
import { SessionManager } from "./sessions/index.js";
import { OpenAIChatModel } from "./provider/openai-chat.js";
import { resolveEndpoint, resolveModelRef } from "./provider/registry.js";
import { effortParams } from "./provider/effort.js";
import { SearchThreads } from "./tools/builtin/search-thread.js";
import type { DaemonTools } from "./tools/types.js";
import { sandboxProber } from "./tools/sandbox-probe.js";
import { RpcError } from "../shared/jsonrpc.js";
import { errorText } from "../shared/error-text.js";
import { buildApp } from "./server/app.js";
import type { DaemonState } from "./server/state.js";
import type { FastifyInstance } from "fastify";
import { newToken, parseListen } from "./server/tcp-auth.js";

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

/** The optional loopback TCP listener, with a fresh token in the 0600 token file. */
async function listenTcp(state: DaemonState, paths: Paths, config: DaemonConfig): Promise<{ app: FastifyInstance; address: string }> {
  const at = parseListen(config.listen!);
  const token = newToken(paths.tokenFile);
  let port = at.port;
  const app = await buildApp(state, { tcp: { token, port: () => port, allowedOrigins: config.allowedOrigins } });
  await app.listen({ host: at.host, port: at.port });
  const bound = app.server.address();
  if (bound && typeof bound === "object") port = bound.port;
  const host = at.host.includes(":") ? `[${at.host}]` : at.host;
  return { app, address: `${host}:${port}` };
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

/** Serves a listening socket by its descriptor (fastify's listen takes paths and ports only). */
async function listenOnFd(app: FastifyInstance, fd: number): Promise<void> {
  await app.ready();
  await new Promise<void>((resolve, reject) => {
    app.server.once("error", reject);
    app.server.listen({ fd }, () => {
      app.server.off("error", reject);
      resolve();
    });
  });
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

async function serve(
  paths: Paths,
  env: NodeJS.ProcessEnv,
  initial: DaemonConfig,
  store: Store,
  log: Logger,
  ownLog: boolean,
  listenFd: number | undefined,
): Promise<Daemon> {
  const build = currentBuild(env);
  const currentConfig = liveConfig(paths.configFile, initial, env, log);
  // Read at each call, so a changed config.json applies to the next one; this daemon's alone.
  const tools: DaemonTools = {
    editorTimeoutMs: () => currentConfig().editorTimeoutSeconds * 1000,
    searches: new SearchThreads(() => currentConfig().searchTimeoutSeconds * 1000),
  };
  // Probed now, while nothing else runs; sessions wait for the answer before their first command.
  const sandbox = sandboxProber(env.PATH);
  void sandbox();
  const keySources = { daemonEnv: env, envFile: paths.envFile, credentialsFile: paths.credentialsFile };
  const sessions = new SessionManager(
    store,
    {
      store,
      log,
      config: currentConfig,
      configDir: paths.configDir,
      maxSteps: () => currentConfig().maxSteps,
      permissionTimeoutMs: () => currentConfig().permissionTimeoutSeconds * 1000,
      goalBounds: () => currentConfig().goal,
      createModel: (ref, windowEnv, effort) => {
        const choice = resolveModelRef(currentConfig(), ref);
        if (!choice) throw RpcError.invalidParams(`model: "${ref}" is not a configured model`);
        const extra = effortParams(choice.provider.name, effort);
        const { modelRetry: r, modelIdleTimeoutSeconds } = currentConfig();
        const policy = { retries: r.retries, baseMs: r.baseSeconds * 1000, maxMs: r.maxSeconds * 1000, idleMs: modelIdleTimeoutSeconds * 1000 };
        return new OpenAIChatModel(choice.ref, choice.model, resolveEndpoint(choice, windowEnv, keySources), () => extra, policy);
      },
      listSessions: async (cwd) => (await sessions.list(cwd, undefined)).sessions,
      sandbox,
      hiddenDirs: daemonDirs(paths),
      tools,
    },
    log,
  );
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

  let shuttingDown: Promise<string> | undefined;
  let stopped!: (reason: string) => void;
  const closed = new Promise<string>((resolve) => (stopped = resolve));
  const state: DaemonState = {
    services: { sessions, config: currentConfig, paths, log, version: PACKAGE_VERSION },
    store,
    startedAt: Date.now(),
    build,
    draining: false,
    connections: 0,
    windowBacklogBytes: initial.windowBacklogBytes,
    idle: () => sessions.liveSessions().every((s) => s.isIdle()),
    plainWindowEnv: basicEnvironment(env),
    sandbox,
    searchThreads: () => tools.searches.running,
    requestShutdown: (reason) => {
      shuttingDown ??= shutdown(reason);
    },
  };

  // We hold the lock, so a socket file left here is stale: only the lock holder may remove it.
  if (listenFd === undefined) rmSync(paths.socketPath, { force: true });
  const app = await buildApp(state);
  try {
    if (listenFd === undefined) await app.listen({ path: paths.socketPath });
    else await listenOnFd(app, listenFd);
  } catch (err) {
    await app.close().catch(() => undefined);
    throw new StartupError(`cannot listen on ${paths.socketPath}: ${errorText(err)}`, "listen_failed");
  }
  let tcp: Awaited<ReturnType<typeof listenTcp>> | undefined;
  try {
    tcp = initial.listen ? await listenTcp(state, paths, initial) : undefined;
  } catch (err) {
    await app.close().catch(() => undefined);
    const message = errorText(err);
    // parseListen's own words already name the setting ("listen: 0.0.0.0 is not a loopback address").
    throw new StartupError(message.startsWith("listen:") ? message : `cannot listen on ${initial.listen}: ${message}`, "listen_failed");
  }
  writeDaemonInfo(paths, {
    pid: process.pid,
    build,
    wire: WIRE_MAJOR,
    socket: paths.socketPath,
    ...(tcp ? { tcp: tcp.address } : {}),
    logFile: paths.logFile,
    startedAt: new Date(state.startedAt).toISOString(),
  });

  const idleMs = initial.idleShutdownSeconds * 1000;
  let idleSince = Date.now();
  const idleTimer = setInterval(
    () => {
      const busy = state.connections > 0 || !state.idle();
      if (busy) idleSince = Date.now();
      else if (idleMs > 0 && Date.now() - idleSince >= idleMs) state.requestShutdown("idle");
      // An upgraded install: the next shim would replace us anyway; leave at the first idle moment.
      else if (currentBuild(env) !== build) state.requestShutdown(`a newer build (${currentBuild(env)}) is installed`);
    },
    Math.min(5000, Math.max(250, idleMs / 4)),
  );
  idleTimer.unref();

  // Damage LevelDB dropped in silence shows as holes in the ledgers; looked for once serving.
  const scan = scanStore(store).then(
    (found) => log.info(found, "store integrity scan done"),
    (err: unknown) => {
      if (!state.draining) log.error({ err }, "store integrity scan failed");
    },
  );
  log.info({ socket: paths.socketPath, build }, "daemon ready");

  /**
   * Every live session is stopped: a running turn is cancelled and its commands, terminals and MCP
   * servers end with it, instead of outliving the daemon as orphans in their own process groups.
   */
  async function stopSessions(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<void>((resolve) => (timer = setTimeout(resolve, SESSION_STOP_BUDGET_MS)));
    const stops = sessions.liveSessions().map((s) => s.stop().catch((err: unknown) => log.warn({ sessionId: s.id, err }, "stopping a session failed")));
    await Promise.race([Promise.all(stops), budget]);
    clearTimeout(timer);
    await sessions.shutdown();
  }

  async function shutdown(reason: string): Promise<string> {
    log.info({ reason }, "daemon stopping");
    state.draining = true;
    clearInterval(idleTimer);
    try {
      await tcp?.app.close();
      if (tcp) rmSync(paths.tokenFile, { force: true });
      await app.close();
      await stopSessions();
      await scan;
      await store.close();
    } catch (err) {
      log.error({ err }, "error while stopping");
    }
    try {
      // A socket systemd passed stays where it is: the next connection starts the daemon again.
      if (listenFd === undefined) unlinkSync(paths.socketPath);
    } catch {
      // already removed by the server's close
    }
    rmSync(paths.daemonInfoFile, { force: true });
    log.info("daemon stopped");
    if (ownLog) await closeLogger(log);
    else log.flush();
    stopped(reason);
    return reason;
  }

  return {
    state,
    app,
    tcpAddress: tcp?.address,
    closed,
    close: (reason = "closed by its owner") => {
      state.requestShutdown(reason);
      return shuttingDown!;
    },
  };
}
