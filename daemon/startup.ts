/**
 * The daemon's start, as far as it can fail: each failure becomes one worded cause (a StartupError)
 * that reaches whoever launched the daemon on the ready pipe (fd 3: `error {"message","reason"}`),
 * the log, stderr, and the `last-start-error` file `reasonix daemon status` reads.
 */
import { closeSync, mkdirSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { ensurePrivateDir, homeProblem, SOCKET_PATH_MAX, UntrustedPathError, type Paths } from "../shared/paths.js";
import { storeLockHolder } from "../shared/store-lock.js";
import { ConfigError, readConfigFile, resolveConfig, type DaemonConfig } from "./config/config.js";
import { StoreDamagedError, StoreLockedError } from "./store/store.js";
import { errorText } from "../shared/error-text.js";

export class StartupError extends Error {
  override name = "StartupError";
  constructor(
    message: string,
    /** config_invalid, home_invalid, untrusted_socket, socket_path, store_locked, store_damaged, store_unavailable, listen_failed, start_failed */
    readonly reason: string,
  ) {
    super(message);
  }
}

/** Another `reasonix daemon run` holds the store: the normal race of two starts, not a failure. */
export class AlreadyRunningError extends Error {
  override name = "AlreadyRunningError";
  constructor(dbDir: string) {
    super(`a daemon already holds the store at ${dbDir}`);
  }
}

export function asStartupError(err: unknown): StartupError {
  if (err instanceof StartupError) return err;
  return new StartupError(errorText(err), "start_failed");
}

/** The folders the daemon needs: the home is a folder, the socket's folders are private and ours. */
export function prepareFolders(paths: Paths): void {
  const home = homeProblem(paths);
  if (home) throw new StartupError(home, "home_invalid");
  for (const dir of [paths.stateDir, paths.logsDir]) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new StartupError(`cannot create ${dir}: ${errorText(err)}`, "home_invalid");
    }
  }
  for (const dir of new Set([paths.runtimeDir, paths.socketDir])) {
    try {
      ensurePrivateDir(dir);
    } catch (err) {
      if (err instanceof UntrustedPathError) throw new StartupError(err.message, "untrusted_socket");
      throw new StartupError(`cannot create ${dir}: ${errorText(err)}`, "start_failed");
    }
  }
  // resolvePaths already chose a short path for a long home; this only trips on a strange system.
  const bytes = Buffer.byteLength(paths.socketPath);
  if (bytes > SOCKET_PATH_MAX) {
    throw new StartupError(`the socket path ${paths.socketPath} is ${bytes} bytes, over the ${SOCKET_PATH_MAX} this system allows`, "socket_path");
  }
}

export function loadConfig(paths: Paths, env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  try {
    return resolveConfig(readConfigFile(paths.configFile), env);
  } catch (err) {
    if (err instanceof ConfigError) throw new StartupError(err.message, "config_invalid");
    throw err;
  }
}

/**
 * Why Store.open failed. A lock held by another `reasonix daemon run` is the normal race of two
 * starts ("already-running"); a lock held by anything else, or a damaged store, is a cause.
 */
export function classifyStoreError(err: unknown, dbDir: string): StartupError | "already-running" {
  if (err instanceof StoreLockedError) {
    const holder = storeLockHolder(dbDir);
    // Where the holder cannot be told (no /proc/locks), assume the usual: another daemon.
    if (!holder || holder.isDaemon) return "already-running";
    return new StartupError(`the store at ${dbDir} is locked by process ${holder.pid} (${holder.command})`, "store_locked");
  }
  if (err instanceof StoreDamagedError) return new StartupError(err.message, "store_damaged");
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const detail = errorText(e?.cause ?? err);
  const corrupt = [e, e?.cause].some((x) => x?.code === "LEVEL_CORRUPTION" || /Corruption/.test(String(x?.message ?? "")));
  if (corrupt) return new StartupError(`the store at ${dbDir} is damaged: ${detail}`, "store_damaged");
  return new StartupError(`the store at ${dbDir} cannot be opened: ${detail}`, "store_unavailable");
}

/**
 * The launcher waits on fd 3 (REASONIX_READY_FD) for one line; systemd and a terminal have no fd 3.
 * The variable is dropped from our environment so nothing the daemon runs writes there.
 */
const readyFd = Number(process.env.REASONIX_READY_FD);
delete process.env.REASONIX_READY_FD;

export function tellLauncher(said: "ready" | "already-running" | StartupError): void {
  if (!Number.isInteger(readyFd) || readyFd < 3) return;
  const line = said instanceof StartupError ? `error ${JSON.stringify({ message: said.message, reason: said.reason })}` : said;
  try {
    writeSync(readyFd, `${line}\n`);
    closeSync(readyFd);
  } catch {
    // the launcher is gone; nothing to tell
  }
}

/** Best effort: the home may be a file, or the disk full; stderr and the log have it anyway. */
export function recordStartError(paths: Paths, cause: StartupError): void {
  try {
    const tmp = `${paths.startErrorFile}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ message: cause.message, reason: cause.reason, pid: process.pid, at: new Date().toISOString() }), { mode: 0o600 });
    renameSync(tmp, paths.startErrorFile);
  } catch {
    // nowhere to write it
  }
}

export function clearStartError(paths: Paths): void {
  try {
    rmSync(paths.startErrorFile, { force: true });
  } catch {
    // not ours to worry about
  }
}
