import type * as Crypto from "node:crypto";
import { createRequire } from "node:module";
import { lstatSync, mkdirSync, statSync, type Stats } from "node:fs";
import { userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import { errorText } from "./error-text.js";

/** Every place the daemon and the shim agree on (DESIGN §3 "Places"). */
export interface Paths {
  home: string | undefined;
  configDir: string;
  configFile: string;
  credentialsFile: string;
  /** `NAME=value` lines of provider keys, read by the daemon into memory (the systemd unit's way). */
  envFile: string;
  stateDir: string;
  dbDir: string;
  logsDir: string;
  logFile: string;
  /** The daemon's own stdout and stderr (and a crash's stack): never rotated away under it. */
  stderrFile: string;
  /** Stacks of uncaught errors, one entry each. */
  crashFile: string;
  /** why the last start failed; written by a daemon that could not start, removed by one that did */
  startErrorFile: string;
  /** where daemon.json lives (`<home>/run`); the socket is here too unless its path is too long */
  runtimeDir: string;
  /** the folder of the socket: `runtimeDir`, or a short private folder for a long home */
  socketDir: string;
  socketPath: string;
  daemonInfoFile: string;
  tokenFile: string;
}

/**
 * Bytes of sun_path a socket path may use (unix(7)): 108 on Linux, 104 on macOS and the BSDs, each
 * with the terminating NUL. A longer path would be silently truncated by the kernel.
 */
export const SOCKET_PATH_MAX = process.platform === "linux" ? 107 : 103;

function currentUid(): number {
  return typeof process.getuid === "function" ? process.getuid() : userInfo().uid;
}

/**
 * The short private socket path for a state folder whose `run/daemon.sock` does not fit in sun_path:
 * `$XDG_RUNTIME_DIR/reasonix/<hash>.sock`, else `/tmp/reasonix-<uid>/<hash>.sock`, where the hash is
 * the first 16 hex digits of the SHA-256 of the absolute folder path, so two homes never share one.
 */
export function shortSocketPath(home: string, env: NodeJS.ProcessEnv = process.env): string {
  // node:crypto only for a home this long: the shim's start does without it.
  const { createHash } = createRequire(import.meta.url)("node:crypto") as typeof Crypto;
  const hash = createHash("sha256").update(resolve(home)).digest("hex").slice(0, 16);
  const name = `${hash}.sock`;
  if (env.XDG_RUNTIME_DIR) {
    const candidate = join(env.XDG_RUNTIME_DIR, "reasonix", name);
    if (Buffer.byteLength(candidate) <= SOCKET_PATH_MAX) return candidate;
  }
  return join("/tmp", `reasonix-${currentUid()}`, name);
}

export function resolvePaths(env: NodeJS.ProcessEnv = process.env): Paths {
  const home = env.REASONIX_HOME && env.REASONIX_HOME.length > 0 ? resolve(env.REASONIX_HOME) : undefined;
  let configDir: string;
  let stateDir: string;
  let runtimeDir: string;
  if (home) {
    configDir = home;
    stateDir = home;
    runtimeDir = join(home, "run");
  } else {
    const userHome = env.HOME ?? userInfo().homedir;
    configDir = join(env.XDG_CONFIG_HOME || join(userHome, ".config"), "reasonix");
    stateDir = join(env.XDG_STATE_HOME || join(userHome, ".local", "state"), "reasonix");
    runtimeDir = env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, "reasonix") : join("/tmp", `reasonix-${currentUid()}`);
  }
  const logsDir = join(stateDir, "logs");
  let socketPath = join(runtimeDir, "daemon.sock");
  // Counted in bytes, as the kernel does; never truncated.
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX) socketPath = shortSocketPath(home ?? stateDir, env);
  return {
    home,
    configDir,
    configFile: join(configDir, "config.json"),
    credentialsFile: join(configDir, "credentials.json"),
    envFile: join(configDir, "env"),
    stateDir,
    dbDir: join(stateDir, "db"),
    logsDir,
    logFile: join(logsDir, "daemon.log"),
    stderrFile: join(logsDir, "daemon.stderr.log"),
    crashFile: join(logsDir, "crash.log"),
    startErrorFile: join(logsDir, "last-start-error"),
    runtimeDir,
    socketDir: dirname(socketPath),
    socketPath,
    daemonInfoFile: join(runtimeDir, "daemon.json"),
    tokenFile: join(home ?? runtimeDir, "token"),
  };
}

/** A folder or socket this user cannot trust; the message names the path and what is wrong. */
export class UntrustedPathError extends Error {
  override name = "UntrustedPathError";
}

/**
 * What is wrong with `dir` as the socket's folder, from its lstat: a link, not a folder, someone
 * else's, or open to group/other. The folder is the boundary that protects the socket (unix(7)).
 */
export function privateDirProblem(dir: string, st: Stats): string | undefined {
  if (st.isSymbolicLink()) return `refusing ${dir}: it is a symbolic link`;
  if (!st.isDirectory()) return `refusing ${dir}: it is not a folder`;
  if (st.uid !== currentUid()) return `refusing ${dir}: it belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o077) !== 0) return `refusing ${dir}: it is open to group or others (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/**
 * Creates `dir` 0700 without following a link (only its parents are made recursively; the last
 * component is one mkdir, which fails on anything already there), then checks what is there with
 * lstat. Throws UntrustedPathError for a folder that is not private and ours.
 */
export function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch (again) {
        if ((again as NodeJS.ErrnoException).code !== "EEXIST") throw again;
      }
    } else if (code !== "EEXIST") {
      throw err;
    }
  }
  const problem = privateDirProblem(dir, lstatSync(dir));
  if (problem) throw new UntrustedPathError(problem);
}

/**
 * The shim's check before it sends a byte: the socket's folder is private and ours, and the socket,
 * if there is one, is a socket of ours. Two lstat calls. A folder that does not exist yet is no
 * problem (no daemon has bound there; the one the shim starts creates it).
 */
export function socketTrustProblem(paths: Pick<Paths, "socketDir" | "socketPath">): string | undefined {
  let dir: Stats;
  try {
    dir = lstatSync(paths.socketDir);
  } catch {
    return undefined;
  }
  const problem = privateDirProblem(paths.socketDir, dir);
  if (problem) return problem;
  let sock: Stats;
  try {
    sock = lstatSync(paths.socketPath);
  } catch {
    return undefined;
  }
  if (!sock.isSocket()) return `refusing ${paths.socketPath}: it is not a socket`;
  if (sock.uid !== currentUid()) return `refusing ${paths.socketPath}: it belongs to another user (uid ${sock.uid})`;
  return undefined;
}

/** `REASONIX_HOME` names something that is not a folder (or cannot be one): the cause, worded. */
export function homeProblem(paths: Pick<Paths, "home">): string | undefined {
  if (!paths.home) return undefined;
  try {
    if (!statSync(paths.home).isDirectory()) return `REASONIX_HOME ${paths.home} is not a folder`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined; // the daemon creates it
    if (code === "ENOTDIR") return `REASONIX_HOME ${paths.home} is not a folder (a part of its path is a file)`;
    return `REASONIX_HOME ${paths.home}: ${errorText(err)}`;
  }
  return undefined;
}
