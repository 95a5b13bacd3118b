/**
 * Background commands of one session. They run on this machine, in the daemon, even when the
 * editor offers terminals: an editor terminal belongs to a window and ends with it, a job belongs
 * to the session and must outlive every window. Each job leads its own process group, so a kill
 * takes down everything it started; the session ends its jobs when it is closed or deleted and
 * when the daemon stops.
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { killGroup } from "./local-commands.js";
import { spawnCommand } from "./lifeline.js";
import type { JobControl, JobRead, JobStart, JobView } from "./types.js";
import { shellCommand } from "./umask.js";

export type { JobRead, JobView };

/** Output not yet read is kept up to this; older unread bytes are dropped and counted. */
const UNREAD_LIMIT = 32 * 1024;
const KILL_GRACE_MS = 2000;
const MAX_JOBS = 16;

interface Job {
  view: JobView;
  child: ChildProcess;
  unread: Buffer[];
  unreadLen: number;
  dropped: number;
  exited: Promise<void>;
}

/**
 * Whether a process group still has a live member. A member that died after its parent may stay a
 * zombie for as long as whoever adopted it does not reap it, and a zombie still answers kill(0):
 * /proc tells them apart (elsewhere kill(0) is all there is).
 */
export function groupAlive(pgid: number): boolean {
  if (!killGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return true;
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
    } catch {
      // gone while we looked
    }
  }
  return false;
}

/** Where a session keeps note of its jobs (records/job-records.ts), so a crash leaves none behind. */
export interface JobHooks {
  started(job: JobView): void;
  ended(job: JobView): void;
}

export class JobTable implements JobControl {
  private readonly jobs = new Map<string, Job>();
  private next = 1;

  constructor(private readonly hooks?: JobHooks) {}

  start(command: string, cwd: string, { env, umask, sandbox }: JobStart): JobView {
    if (this.running() >= MAX_JOBS) throw new Error(`this session already runs ${MAX_JOBS} background jobs; stop one with command_kill first`);
    const childEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) childEnv[k] = v;
    const child = spawnCommand(shellCommand(command, cwd, umask, sandbox, { lifeline: true }), { cwd, env: childEnv });
    const jobId = `job-${this.next++}`;
    const view: JobView = { jobId, command, cwd, pid: child.pid, startedAt: new Date().toISOString(), state: "running", exitCode: null, signal: null };
    const job: Job = { view, child, unread: [], unreadLen: 0, dropped: 0, exited: Promise.resolve() };
    const push = (c: Buffer): void => {
      job.unread.push(c);
      job.unreadLen += c.length;
      while (job.unreadLen > UNREAD_LIMIT && job.unread.length > 0) {
        const over = job.unreadLen - UNREAD_LIMIT;
        const first = job.unread[0]!;
        if (first.length <= over) {
          job.unread.shift();
          job.unreadLen -= first.length;
          job.dropped += first.length;
        } else {
          job.unread[0] = first.subarray(over);
          job.unreadLen -= over;
          job.dropped += over;
        }
      }
    };
    child.stdout!.on("data", push);
    child.stderr!.on("data", push);
    job.exited = new Promise<void>((resolve) => {
      child.once("error", (err) => {
        push(Buffer.from(`${err.message}\n`));
        view.state = "exited";
        resolve();
      });
      child.once("close", (code, sig) => {
        view.state = "exited";
        view.exitCode = code;
        view.signal = sig;
        resolve();
      });
    });
    void job.exited.then(() => this.hooks?.ended({ ...view }));
    // The shell is done: whatever it left in its group would hold the pipes and outlive the job.
    child.once("exit", () => {
      if (child.pid !== undefined && groupAlive(child.pid)) void this.endGroup(child.pid);
    });
    this.jobs.set(jobId, job);
    if (child.pid !== undefined) this.hooks?.started({ ...view });
    return { ...view };
  }

  /** The output since the last read (bounded), and the job's state. */
  read(jobId: string): JobRead {
    const job = this.get(jobId);
    const output = Buffer.concat(job.unread).toString("utf8");
    const read: JobRead = { ...job.view, output, dropped: job.dropped };
    job.unread = [];
    job.unreadLen = 0;
    job.dropped = 0;
    return read;
  }

  /** Waits until the job exits, `timeoutMs` passes or `signal` aborts; then reads it. */
  async wait(jobId: string, timeoutMs: number, signal: AbortSignal): Promise<JobRead & { timedOut: boolean }> {
    const job = this.get(jobId);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const done = await Promise.race([
      job.exited.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
        onAbort = () => resolve(false);
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
    return { ...this.read(jobId), timedOut: !done && !signal.aborted };
  }

  /** Stops the job's whole process group (TERM, then KILL after a grace) and reads what is left. */
  async kill(jobId: string): Promise<JobRead> {
    const job = this.get(jobId);
    if (job.view.state === "running" && job.child.pid !== undefined) await this.endGroup(job.child.pid);
    await job.exited;
    return this.read(jobId);
  }

  list(): JobView[] {
    return [...this.jobs.values()].map((j) => ({ ...j.view }));
  }

  running(): number {
    return [...this.jobs.values()].filter((j) => j.view.state === "running").length;
  }

  /** Session close, delete, daemon stop: every job's process group ends. */
  async killAll(): Promise<void> {
    await Promise.all([...this.jobs.values()].map((j) => (j.child.pid !== undefined ? this.endGroup(j.child.pid) : Promise.resolve())));
    await Promise.all([...this.jobs.values()].map((j) => j.exited));
  }

  private get(jobId: string): Job {
    const job = this.jobs.get(jobId);
    if (!job) {
      const known = [...this.jobs.keys()];
      throw new Error(`no background job ${jobId} in this session${known.length ? ` (jobs: ${known.join(", ")})` : ""}`);
    }
    return job;
  }

  /** TERM to the group, KILL to what is left after the grace; resolves once the group is empty. */
  private async endGroup(pid: number): Promise<void> {
    if (!killGroup(pid, "SIGTERM")) return;
    const deadline = Date.now() + KILL_GRACE_MS;
    while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    if (groupAlive(pid)) killGroup(pid, "SIGKILL");
    const hard = Date.now() + KILL_GRACE_MS;
    while (groupAlive(pid) && Date.now() < hard) await new Promise((r) => setTimeout(r, 25));
  }
}
