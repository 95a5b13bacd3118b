/**
 * Who holds the LevelDB store's lock. The lock elects the daemon (DESIGN §3 "Daemon life"), so a
 * holder that is a `reasonix daemon run` is a daemon already running; anything else holding it is a
 * cause worth naming. Linux only (`/proc/locks`); elsewhere the holder is unknown.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export interface LockHolder {
  pid: number;
  /** its command name (`/proc/<pid>/comm`), e.g. "node" */
  command: string;
  /** its command line is `… reasonix … daemon run` */
  isDaemon: boolean;
}

/** Major and minor of a dev_t as glibc encodes it, which is what `stat().dev` reports. */
function majorMinor(dev: number): [number, number] {
  const big = BigInt(dev);
  const major = Number(((big >> 8n) & 0xfffn) | ((big >> 32n) & ~0xfffn));
  const minor = Number((big & 0xffn) | ((big >> 12n) & ~0xffn));
  return [major, minor];
}

/** A `reasonix daemon run` command line (node, the bin script, then `daemon run`). */
export function isDaemonCommandLine(args: string[]): boolean {
  const at = args.indexOf("daemon");
  return at > 0 && args[at + 1] === "run" && args.slice(0, at).some((a) => /reasonix(\.js)?$/.test(a));
}

/** The process holding the POSIX lock on `<dbDir>/LOCK`, if any and if it can be told. */
export function storeLockHolder(dbDir: string): LockHolder | undefined {
  let ino: number;
  let dev: [number, number];
  let locks: string;
  try {
    const st = statSync(join(dbDir, "LOCK"));
    ino = st.ino;
    dev = majorMinor(st.dev);
    locks = readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  // "1: POSIX  ADVISORY  WRITE 6963 fe:00:2147025 0 EOF". Lines with "->" are waiters, not holders;
  // an OFD lock shows pid -1 (no owner to name).
  const candidates: Array<{ pid: number; sameDev: boolean }> = [];
  for (const line of locks.split("\n")) {
    const m = /^\d+:\s+(?!->)\S+\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/.exec(line);
    if (!m || Number(m[4]) !== ino) continue;
    const pid = Number(m[1]);
    if (pid <= 0) continue;
    candidates.push({ pid, sameDev: parseInt(m[2]!, 16) === dev[0] && parseInt(m[3]!, 16) === dev[1] });
  }
  const found = candidates.find((c) => c.sameDev) ?? candidates[0];
  if (!found) return undefined;
  let command = "?";
  let args: string[] = [];
  try {
    command = readFileSync(`/proc/${found.pid}/comm`, "utf8").trim();
    args = readFileSync(`/proc/${found.pid}/cmdline`, "utf8")
      .split("\0")
      .filter((a) => a.length > 0);
  } catch {
    // it ended while we looked, or lives in another pid namespace
    return undefined;
  }
  return { pid: found.pid, command, isDaemon: isDaemonCommandLine(args) };
}
