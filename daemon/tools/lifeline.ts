/**
 * A confined command ends with the daemon that started it, however the daemon ends. bwrap's
 * `--die-with-parent` leaves a window (run-sweep.ts): the inner bwrap binds its life to the outer
 * one only once its mounts are made, and a daemon killed before then (SIGKILL, the OOM killer, a
 * client killing its process tree) left the command running for ever, owned by nobody: 4 of 30
 * spawns whose parent was SIGKILLed 0–9 ms after them ran on. So the daemon also hands the sandbox
 * one end of a socket it never writes to (the spawn's fourth stdio): a small shell inside waits
 * for it to read end-of-file, which happens when every copy of the daemon's end is closed, by exit
 * or by kill, and then SIGKILLs every process of the sandbox's pid namespace (`kill -9 -1` reaches
 * only that namespace; this is why it is used confined only). The command itself runs with the
 * descriptor closed, by the same pid the shell had (`exec`), so process groups and kills are
 * unchanged.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable } from "node:stream";

/** `$0 "$@"` is the command's argv; the watcher is the one background child this shell leaves. */
const WATCHER = '{ read -r _ <&3; kill -9 -1; } >/dev/null 2>&1 & exec "$0" "$@" 3<&-';

/** `argv` run behind the watcher; only inside a sandbox's own pid namespace, only with spawnCommand's fourth stdio. */
export function withLifeline(argv: readonly string[]): string[] {
  return ["/bin/sh", "-c", WATCHER, ...argv];
}

/** What to spawn: `lifeline` when the argv waits on the socket (Sandbox.wrap with `lifeline`). */
export interface CommandLine {
  file: string;
  args: string[];
  lifeline?: boolean;
}

/**
 * Spawns a command that leads its own process group with its output piped; with a lifeline, the
 * daemon's end is closed once the command has exited (the watcher then ends whatever it left).
 */
export function spawnCommand(cmd: CommandLine, opts: { cwd: string; env: Record<string, string> }): ChildProcessByStdio<null, Readable, Readable> {
  const stdio = cmd.lifeline ? (["ignore", "pipe", "pipe", "pipe"] as const) : (["ignore", "pipe", "pipe"] as const);
  const child = spawn(cmd.file, cmd.args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: [...stdio] }) as ChildProcessByStdio<null, Readable, Readable>;
  const line = child.stdio[3];
  if (line) {
    const cut = (): void => void line.destroy();
    child.once("exit", cut);
    child.once("error", cut);
  }
  return child;
}
