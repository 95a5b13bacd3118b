import { lstatSync, mkdirSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";

/** Every place the daemon and the shim agree on (DESIGN §3 "Places"). */
export interface Paths {
  home: string | undefined;
  configDir: string;
  configFile: string;
  credentialsFile: string;
  stateDir: string;
  dbDir: string;
  logsDir: string;
  logFile: string;
  runtimeDir: string;
  socketPath: string;
  daemonInfoFile: string;
  tokenFile: string;
}

export function resolvePaths(env: NodeJS.ProcessEnv = process.env): Paths {
  const home = env.REASONIX_HOME && env.REASONIX_HOME.length > 0 ? env.REASONIX_HOME : undefined;
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
    runtimeDir = env.XDG_RUNTIME_DIR
      ? join(env.XDG_RUNTIME_DIR, "reasonix")
      : join("/tmp", `reasonix-${userInfo().uid}`);
  }
  const logsDir = join(stateDir, "logs");
  return {
    home,
    configDir,
    configFile: join(configDir, "config.json"),
    credentialsFile: join(configDir, "credentials.json"),
    stateDir,
    dbDir: join(stateDir, "db"),
    logsDir,
    logFile: join(logsDir, "daemon.log"),
    runtimeDir,
    socketPath: join(runtimeDir, "daemon.sock"),
    daemonInfoFile: join(runtimeDir, "daemon.json"),
    tokenFile: join(home ?? runtimeDir, "token"),
  };
}

/**
 * Creates the socket's folder 0700 and refuses one that is a link, someone else's, or open to
 * group/other: the folder is the boundary that protects the socket (unix(7)).
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new Error(`refusing ${dir}: it is not a plain directory`);
  }
  if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
    throw new Error(`refusing ${dir}: it belongs to another user`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new Error(`refusing ${dir}: it is open to group or others (mode ${(st.mode & 0o777).toString(8)})`);
  }
}
