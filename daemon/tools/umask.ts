/**
 * The user's umask for the user's files. The daemon runs with umask 077 for its own files (store,
 * logs, token); what it creates in the user's project, and what the session's commands create,
 * follow the umask of the window that created the session instead (the shim sends it). The
 * daemon's process umask is never changed for this: the libuv thread pool creates the daemon's
 * private files concurrently. Files get their mode set after creation, commands start from a shell
 * that sets the umask and then execs them.
 */
import type { Sandbox, WrapOptions } from "./sandbox.js";
import type { CommandLine } from "./lifeline.js";

/** For a window that did not say (a plain ACP client on the TCP listener): the usual login default. */
export const DEFAULT_UMASK = 0o022;

/** A umask as the shell's `umask` builtin takes it: four octal digits. */
export function umaskText(umask: number): string {
  return (umask & 0o777).toString(8).padStart(4, "0");
}

/** The umask in a window's upgrade header (`0022`, `22`, `027`); undefined when absent or malformed. */
export function parseUmask(text: string | undefined): number | undefined {
  if (text === undefined || !/^[0-7]{1,4}$/.test(text)) return undefined;
  const value = Number.parseInt(text, 8);
  return value <= 0o777 ? value : undefined;
}

/** The mode of a new file, as open(…, 0666) under `umask` would give it. */
export function fileMode(umask: number): number {
  return 0o666 & ~umask;
}

/** The mode of a new folder, as mkdir(…, 0777) under `umask` would give it. */
export function folderMode(umask: number): number {
  return 0o777 & ~umask;
}

/**
 * `argv` run with `umask`: a shell sets it, then execs `argv` unchanged (same pid, so the process
 * group and the kills stay as they were; the program's own arguments and `$0` untouched).
 */
export function withUmask(argv: readonly string[], umask: number): string[] {
  return ["/bin/sh", "-c", `umask ${umaskText(umask)} && exec "$0" "$@"`, ...argv];
}

/**
 * The program and arguments that run a shell command line (`/bin/sh -c command`) with `umask`, in
 * `sandbox` when given (the umask is set inside it). The command's text reaches its shell as it is.
 */
export function shellCommand(command: string, cwd: string, umask: number, sandbox?: Sandbox, opts?: WrapOptions): CommandLine {
  const argv = withUmask(["/bin/sh", "-c", command], umask);
  return sandbox ? sandbox.wrap(argv, cwd, opts) : { file: argv[0]!, args: argv.slice(1) };
}
