/**
 * Shell commands on this machine. Each command leads its own process group so that a timeout, a
 * cancel, or the shell simply exiting takes every process it started down with it: background jobs
 * would otherwise hold our output pipes open (the call would never finish) or outlive the session.
 */
import type { CommandResult, CommandRunner } from "./types.js";
import { spawnCommand } from "./lifeline.js";
import { shellCommand } from "./umask.js";

const HEAD_BYTES = 16 * 1024;
const TAIL_BYTES = 16 * 1024;
const KILL_GRACE_MS = 2000;

/** Keeps the first and last bytes of a stream of any length. */
export class BoundedOutput {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  private total = 0;

  constructor(
    private readonly headMax = HEAD_BYTES,
    private readonly tailMax = TAIL_BYTES,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.headMax) {
      const take = Math.min(chunk.length, this.headMax - this.headLen);
      this.head.push(chunk.subarray(0, take));
      this.headLen += take;
      chunk = chunk.subarray(take);
      if (!chunk.length) return;
    }
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen - (this.tail[0]?.length ?? 0) >= this.tailMax) this.tailLen -= this.tail.shift()!.length;
  }

  result(): { output: string; truncated: boolean } {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailMax) tail = tail.subarray(tail.length - this.tailMax);
    const omitted = this.total - head.length - tail.length;
    if (omitted <= 0) return { output: Buffer.concat([head, tail]).toString("utf8"), truncated: false };
    const marker = `\n[... ${omitted} bytes omitted ...]\n`;
    return { output: head.toString("utf8") + marker + tail.toString("utf8"), truncated: true };
  }
}

/** Signals the whole process group; false when no process of it is left. */
export function killGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export function localCommands(env: Record<string, string | undefined>): CommandRunner {
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;

  return {
    run(command, { cwd, timeoutMs, signal, sandbox, umask }) {
      if (signal.aborted) {
        return Promise.resolve({ exitCode: null, signal: null, output: "", truncated: false, timedOut: false, cancelled: true });
      }
      return new Promise<CommandResult>((resolve, reject) => {
        // Confined or not, the command leads its own process group; bwrap keeps it (no new session).
        const child = spawnCommand(shellCommand(command, cwd, umask, sandbox, { lifeline: true }), { cwd, env: childEnv });
        const out = new BoundedOutput();
        let timedOut = false;
        let cancelled = false;
        let killTimer: NodeJS.Timeout | undefined;
        let settled = false;

        const stop = () => {
          if (child.pid === undefined || killTimer) return;
          const pid = child.pid;
          killGroup(pid, "SIGTERM");
          killTimer = setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
          // Stragglers that ignore SIGTERM still get killed after we answer, without holding the daemon up.
          killTimer.unref();
        };
        const onAbort = () => {
          cancelled = true;
          stop();
        };
        const timer =
          timeoutMs > 0 && Number.isFinite(timeoutMs)
            ? setTimeout(() => {
                timedOut = true;
                stop();
              }, timeoutMs)
            : undefined;
        signal.addEventListener("abort", onAbort, { once: true });

        const cleanup = () => {
          settled = true;
          if (timer) clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
        };

        child.stdout.on("data", (c: Buffer) => out.push(c));
        child.stderr.on("data", (c: Buffer) => out.push(c));
        // The shell is done: whatever it left running in its group would keep our pipes open.
        child.on("exit", () => {
          if (child.pid !== undefined && killGroup(child.pid, 0)) stop();
        });
        child.on("error", (err) => {
          if (settled) return;
          cleanup();
          reject(err);
        });
        child.on("close", (code, sig) => {
          if (settled) return;
          cleanup();
          // An empty group's id may be reused by an unrelated process; never signal it again.
          if (killTimer && child.pid !== undefined && !killGroup(child.pid, 0)) clearTimeout(killTimer);
          resolve({ exitCode: code, signal: sig, ...out.result(), timedOut, cancelled: cancelled && !timedOut });
        });
      });
    },
  };
}
