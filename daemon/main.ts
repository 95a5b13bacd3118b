/**
 * `reasonix daemon run`: win the store lock, bind the socket, say ready, serve until stopped or idle.
 * Heavy modules (openai, MCP) load later, on first use, so the first `initialize` is answered fast.
 */
import { renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { resolvePaths, type Paths } from "../shared/paths.js";
import { PACKAGE_VERSION, WIRE_MAJOR } from "../shared/wire.js";
import { currentBuild } from "../shared/build.js";
import { readConfigFile, resolveConfig, type DaemonConfig } from "./config/config.js";
import { createLogger, type Logger } from "./log/log.js";
import { Store } from "./store/store.js";
import { scanStore } from "./store/integrity.js";
import { asStartupError, classifyStoreError, clearStartError, loadConfig, prepareFolders, recordStartError, StartupError, tellLauncher } from "./startup.js";
import { SessionManager } from "./sessions/manager.js";
import { OpenAIChatModel } from "./provider/openai-chat.js";
import { resolveEndpoint, resolveModelRef } from "./provider/registry.js";
import { effortParams } from "./provider/effort.js";
import { setSearchStallBound } from "./tools/builtin/search-thread.js";
import { RpcError } from "../shared/jsonrpc.js";
import { buildApp } from "./server/app.js";
import type { DaemonState } from "./server/state.js";
import type { FastifyInstance } from "fastify";
import { newToken, parseListen } from "./server/tcp-auth.js";

export const BUILD_ID = currentBuild();

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

function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}`;
  } catch {
    return "none";
  }
}

function writeDaemonInfo(paths: Paths, info: object): void {
  const tmp = `${paths.daemonInfoFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(info, null, 2), { mode: 0o600 });
  renameSync(tmp, paths.daemonInfoFile);
}

export async function runDaemon(): Promise<void> {
  process.umask(0o077);
  // Our stdout and stderr are the log file: a full disk must not turn a diagnostic into a crash.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  const paths = resolvePaths();
  let log: Logger | undefined;
  let store: Store | undefined;
  try {
    prepareFolders(paths);
    log = createLogger(paths.logFile);
    const config = loadConfig(paths);
    try {
      store = await Store.open(paths.dbDir, log);
    } catch (err) {
      const verdict = classifyStoreError(err, paths.dbDir);
      if (verdict !== "already-running") throw verdict;
      process.stderr.write("reasonix daemon: already running\n");
      tellLauncher("already-running");
      return;
    }
    await serve(paths, config, store, log);
  } catch (err) {
    // Whatever stopped the start, the launcher gets it in words, not a bare exit code.
    const cause = asStartupError(err);
    process.stderr.write(`reasonix daemon: ${cause.message}\n`);
    log?.error({ err: cause.message, reason: cause.reason }, "cannot start");
    recordStartError(paths, cause);
    tellLauncher(cause);
    await store?.close().catch(() => undefined);
    process.exitCode = 2;
    // Half-started pieces (a listener, a timer) must not keep a failed daemon around.
    setTimeout(() => process.exit(2), 2000).unref();
    return;
  }
  clearStartError(paths);
  tellLauncher("ready");
  // Damage LevelDB dropped in silence shows as holes in the ledgers; looked for once serving.
  const serving = store;
  const logger = log;
  scanStore(serving).then(
    (found) => logger.info(found, "store integrity scan done"),
    (err: unknown) => logger.error({ err: (err as Error)?.message }, "store integrity scan failed"),
  );
  log.info({ socket: paths.socketPath, build: BUILD_ID }, "daemon ready");
  process.stderr.write(`reasonix daemon: ready (pid ${process.pid}, socket ${paths.socketPath})\n`);
}

async function serve(paths: Paths, initial: DaemonConfig, store: Store, log: Logger): Promise<DaemonState> {
  // `reasonix setup` may change config.json under a running daemon; new sessions see the change.
  let config = initial;
  let configStamp = fileStamp(paths.configFile);
  function currentConfig(): DaemonConfig {
    const stamp = fileStamp(paths.configFile);
    if (stamp !== configStamp) {
      configStamp = stamp;
      try {
        config = resolveConfig(readConfigFile(paths.configFile), process.env);
        log.info("configuration reloaded");
      } catch (err) {
        log.warn({ err: (err as Error).message }, "configuration change ignored");
      }
    }
    return config;
  }
  // grep and glob read the bound at each search, so a changed config.json applies to the next one.
  setSearchStallBound(() => currentConfig().searchTimeoutSeconds * 1000);
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
      createModel: (ref, env, effort) => {
        const choice = resolveModelRef(currentConfig(), ref);
        if (!choice) throw RpcError.invalidParams(`model: "${ref}" is not a configured model`);
        const extra = effortParams(choice.provider.name, effort);
        return new OpenAIChatModel(choice.ref, choice.model, resolveEndpoint(choice, env, paths.credentialsFile), () => extra);
      },
      listSessions: async (cwd) => (await sessions.list(cwd, undefined)).sessions,
    },
    log,
  );
  await sessions.recover();
  sessions.startIdleUnload();

  let stopping = false;
  const state: DaemonState = {
    services: { sessions, config: currentConfig, paths, log, version: PACKAGE_VERSION },
    store,
    startedAt: Date.now(),
    build: BUILD_ID,
    draining: false,
    connections: 0,
    idle: () => sessions.liveSessions().every((s) => s.isIdle()),
    requestShutdown: (reason) => {
      if (stopping) return;
      stopping = true;
      void shutdown(reason);
    },
  };

  // We hold the lock, so a socket file left here is stale: only the lock holder may remove it.
  rmSync(paths.socketPath, { force: true });
  const app = await buildApp(state);
  try {
    await app.listen({ path: paths.socketPath });
  } catch (err) {
    throw new StartupError(`cannot listen on ${paths.socketPath}: ${(err as Error).message}`, "listen_failed");
  }
  let tcp: Awaited<ReturnType<typeof listenTcp>> | undefined;
  try {
    tcp = config.listen ? await listenTcp(state, paths, config) : undefined;
  } catch (err) {
    await app.close().catch(() => undefined);
    const message = (err as Error).message;
    // parseListen's own words already name the setting ("listen: 0.0.0.0 is not a loopback address").
    throw new StartupError(message.startsWith("listen:") ? message : `cannot listen on ${config.listen}: ${message}`, "listen_failed");
  }
  writeDaemonInfo(paths, {
    pid: process.pid,
    build: BUILD_ID,
    wire: WIRE_MAJOR,
    socket: paths.socketPath,
    ...(tcp ? { tcp: tcp.address } : {}),
    logFile: paths.logFile,
    startedAt: new Date(state.startedAt).toISOString(),
  });

  const idleMs = config.idleShutdownSeconds * 1000;
  let idleSince = Date.now();
  const idleTimer = setInterval(() => {
    const busy = state.connections > 0 || !state.idle();
    if (busy) idleSince = Date.now();
    else if (idleMs > 0 && Date.now() - idleSince >= idleMs) state.requestShutdown("idle");
    // An upgraded install: the next shim would replace us anyway; leave at the first idle moment.
    else if (currentBuild() !== BUILD_ID) state.requestShutdown(`a newer build (${currentBuild()}) is installed`);
  }, Math.min(5000, Math.max(250, idleMs / 4)));
  idleTimer.unref();

  async function shutdown(reason: string): Promise<void> {
    log.info({ reason }, "daemon stopping");
    state.draining = true;
    clearInterval(idleTimer);
    try {
      await tcp?.app.close();
      if (tcp) rmSync(paths.tokenFile, { force: true });
      await app.close();
      await sessions.shutdown();
      await store.close();
    } catch (err) {
      log.error({ err }, "error while stopping");
    }
    try {
      unlinkSync(paths.socketPath);
    } catch {
      // already removed by the server's close
    }
    rmSync(paths.daemonInfoFile, { force: true });
    log.info("daemon stopped");
    log.flush();
    process.exit(0);
  }

  // A stray rejection somewhere in one session must not take every other session down with it.
  process.on("unhandledRejection", (err) => log.error({ err }, "unhandled rejection"));
  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    process.on(sig, () => state.requestShutdown(sig));
  }
  return state;
}
