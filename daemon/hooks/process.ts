/**
 * One hook command: `/bin/sh -c command` as the user, with the session's environment and umask, in
 * the session's folder, the event as JSON on its stdin. It leads its own process group, and at its
 * bound (or the turn's cancel) the whole group is killed: a hook that hangs, or left something
 * running with our pipes, never holds the turn past its bound. Output is kept up to a cap per stream.
 */
import { spawn } from "node:child_process";
import { killGroup } from "../tools/local-commands.js";
import { shellCommand } from "../tools/umask.js";
import { errorText } from "../../shared/error-text.js";

/** What is kept of each of a hook's streams; the rest is counted and cut. */
export const MAX_HOOK_OUTPUT_BYTES = 64 * 1024;
/** After the shell exits, how long its pipes may stay open (a child it left behind) before we stop reading. */
const DRAIN_MS = 1000;

export interface HookRun {
  /** null when it was stopped (bound, cancel) or never started. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** Why it could not be started. */
  spawnError?: string;
}

export interface HookSpawn {
  cwd: string;
  env: Record<string, string | undefined>;
  umask: number;
  input: string;
  timeoutMs: number;
  signal: AbortSignal;
}

class Capped {
  private chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  push(chunk: Buffer): void {
    const room = MAX_HOOK_OUTPUT_BYTES - this.kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }

  text(): string {
    const text = Buffer.concat(this.chunks).toString("utf8");
    return this.dropped > 0 ? `${text}\n[… ${this.dropped} more bytes cut: a hook's output is kept up to ${MAX_HOOK_OUTPUT_BYTES / 1024} KiB]` : text;
  }
}

export function runHookProcess(command: string, opts: HookSpawn): Promise<HookRun> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
  return new Promise<HookRun>((resolve) => {
    const out = new Capped();
    const err = new Capped();
    let timedOut = false;
    let cancelled = false;
    let exitCode: number | null = null;
    let done = false;
    let drain: NodeJS.Timeout | undefined;
    const { file, args } = shellCommand(command, opts.cwd, opts.umask);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, { cwd: opts.cwd, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      resolve({ exitCode: null, stdout: "", stderr: "", timedOut: false, cancelled: false, spawnError: errorText(e) });
      return;
    }
    const killAll = (): void => {
      if (child.pid !== undefined) killGroup(child.pid, "SIGKILL");
    };
    const finish = (extra: Partial<HookRun> = {}): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(drain);
      opts.signal.removeEventListener("abort", onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ exitCode: timedOut || cancelled ? null : exitCode, stdout: out.text(), stderr: err.text(), timedOut, cancelled, ...extra });
    };
    const stop = (why: "timeout" | "cancel"): void => {
      if (why === "timeout") timedOut = true;
      else cancelled = true;
      killAll();
      finish();
    };
    const onAbort = (): void => stop("cancel");
    const timer = setTimeout(() => stop("timeout"), opts.timeoutMs);
    opts.signal.addEventListener("abort", onAbort, { once: true });
    if (opts.signal.aborted) onAbort();
    child.stdout?.on("data", (c: Buffer) => out.push(c));
    child.stderr?.on("data", (c: Buffer) => err.push(c));
    // A hook that never reads its stdin (or exits first) closes the pipe under our write.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(opts.input);
    child.on("error", (e) => finish({ spawnError: errorText(e) }));
    child.on("exit", (code) => {
      exitCode = code;
      // What it left running in its group goes with it; a child that left the group may keep the pipes.
      killAll();
      drain = setTimeout(() => finish(), DRAIN_MS);
    });
    child.on("close", () => finish());
  });
}
