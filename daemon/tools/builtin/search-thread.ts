/**
 * Runs a search job (search-job.ts) on its own worker thread, so neither a slow walk nor a pattern
 * that backtracks exponentially holds the daemon's event loop, which every window's sessions share.
 * A regex cannot be interrupted from inside its thread: a job that stops making progress for the
 * stall bound is terminated, thread and all, and so is one whose call is cancelled.
 */
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { MATCHING, PROGRESS_SLOTS, THREAD, TICKS } from "./search-job.js";
import type { ResultOf, SearchJob, SearchOutcome, SearchRunner, SearchSpec, SkippedLinks } from "../search-types.js";
import type { WorkerReply } from "./search-worker.js";

/** A real file beside this one in dist, so it works wherever the compiled daemon runs from. */
const WORKER_URL = new URL("./search-worker.js", import.meta.url);

export const DEFAULT_STALL_MS = 10_000;
/** A whole search stops (keeping what it found) after this, or after the stall bound if longer. */
export const MIN_TOTAL_MS = 60_000;
/** A walk that lists a huge tree holds every path; more than that is a runaway. */
const WORKER_HEAP_MB = 256;

/**
 * One daemon's search threads: its stall bound (searchTimeoutSeconds, read at each search, so a
 * changed config.json applies to the next one) and how many run now. Made once per daemon: two
 * daemons in one process (the in-process tests make them) each keep their own bound and count.
 */
export class SearchThreads implements SearchRunner {
  private count = 0;

  constructor(private readonly stallBound: () => number = () => DEFAULT_STALL_MS) {}

  /** Threads alive now (for /metrics, and for tests that a stopped search left none). */
  get running(): number {
    return this.count;
  }

  run<S extends SearchSpec>(spec: S, opts: { signal: AbortSignal; stallMs?: number; totalMs?: number }): Promise<SearchOutcome<ResultOf<S>>> {
    if (opts.signal.aborted) return Promise.resolve({ status: "cancelled" });
    const stallMs = opts.stallMs ?? this.stallBound();
    const totalMs = opts.totalMs ?? Math.max(MIN_TOTAL_MS, stallMs);
    const job = { ...spec, deadline: Date.now() + totalMs } as SearchJob;
    return watchWorker<S>(job, opts.signal, stallMs, totalMs, {
      started: () => this.count++,
      exited: () => this.count--,
    });
  }
}

/** A thread's scheduler state and CPU time (Linux /proc; undefined elsewhere or once it is gone). */
function threadState(tid: number): { state: string; cpuMs: number } | undefined {
  if (tid <= 0) return undefined;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "latin1");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, the 14th and 15th fields, in clock ticks of 10 ms (USER_HZ is 100 on Linux).
    return { state: fields[0] ?? "", cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
  } catch {
    return undefined;
  }
}

/**
 * No progress for the bound is a stall only if the thread had the chance to make some. At the
 * lowest priority on a loaded machine a thread can wait seconds for a CPU: runnable all along but
 * given less than half the bound of CPU since it last moved, it is starved, not stuck, and the
 * search's whole deadline still bounds it. A thread blocked on a read (a hung file system) or one
 * that burned its CPU without moving (a stuck pattern) is stalled.
 */
function starved(tid: number, cpuAtMove: number, stallMs: number): boolean {
  const now = threadState(tid);
  return now !== undefined && now.state === "R" && now.cpuMs - cpuAtMove < stallMs / 2;
}

/** Starts the job's thread and settles with its outcome once the thread is gone. */
function watchWorker<S extends SearchSpec>(
  job: SearchJob,
  signal: AbortSignal,
  stallMs: number,
  totalMs: number,
  life: { started(): void; exited(): void },
): Promise<SearchOutcome<ResultOf<S>>> {
  const shared = new SharedArrayBuffer(PROGRESS_SLOTS * Int32Array.BYTES_PER_ELEMENT);
  const progress = new Int32Array(shared);
  const worker = new Worker(WORKER_URL, {
    workerData: { job, progress: shared },
    env: {},
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  life.started();
  return new Promise((resolve) => {
    let settled = false;
    let watchdog: NodeJS.Timeout | undefined;
    // Every outcome waits for the thread to be gone (a finished one ends by itself at once), so a
    // stopped search leaves no CPU burning behind it and the count of threads is exact.
    const finish = (outcome: SearchOutcome<ResultOf<S>>): void => {
      if (settled) return;
      settled = true;
      clearInterval(watchdog);
      signal.removeEventListener("abort", onAbort);
      worker.terminate().then(
        () => resolve(outcome),
        () => resolve(outcome),
      );
    };
    const onAbort = (): void => finish({ status: "cancelled" });
    signal.addEventListener("abort", onAbort, { once: true });

    // The stall clock starts at the job's first tick, so starting a thread under load is no stall;
    // a thread that never gets going is stopped once the whole search's time is up.
    const started = performance.now();
    let lastTicks = 0;
    let lastMove = started;
    let cpuAtMove = 0;
    watchdog = setInterval(
      () => {
        const ticks = Atomics.load(progress, TICKS);
        const now = performance.now();
        if (ticks !== lastTicks) {
          lastTicks = ticks;
          lastMove = now;
          cpuAtMove = threadState(Atomics.load(progress, THREAD))?.cpuMs ?? 0;
        } else if (ticks > 0 && now - lastMove >= stallMs && !starved(Atomics.load(progress, THREAD), cpuAtMove, stallMs)) {
          finish({ status: "stalled", matching: Atomics.load(progress, MATCHING) === 1, boundMs: stallMs });
        } else if (now - started >= totalMs + stallMs) {
          finish({ status: "crashed", message: `the search thread did not finish within ${seconds(totalMs + stallMs)} s` });
        }
      },
      Math.max(10, Math.min(250, stallMs / 10)),
    );
    watchdog.unref();
    worker.once("message", (reply: WorkerReply) => {
      if (reply.ok) return finish({ status: "done", result: reply.result as ResultOf<S>, timeLimitMs: totalMs });
      const error: Error & { code?: string } = new Error(reply.error.message);
      if (reply.error.code) error.code = reply.error.code;
      finish({ status: "failed", error });
    });
    worker.once("error", (err) => finish({ status: "crashed", message: err.message }));
    worker.once("exit", (code) => {
      life.exited();
      finish({ status: "crashed", message: `the search thread ended with code ${code} before it answered` });
    });
  });
}

/** How a search that did not finish reads to the model; `what` names the pattern's kind. */
export function unfinishedMessage(outcome: Exclude<SearchOutcome, { status: "done" | "failed" }>, what: string): string {
  switch (outcome.status) {
    case "cancelled":
      return "Cancelled.";
    case "stalled":
      return outcome.matching
        ? `The ${what} took longer than ${seconds(outcome.boundMs)} s; simplify it (nested quantifiers such as (a+)+ can take exponential time on some lines).`
        : `Reading files made no progress for ${seconds(outcome.boundMs)} s (a slow or hung file system?); the search was stopped. Narrow the path.`;
    case "crashed":
      return `The search failed: ${outcome.message}`;
  }
}

/**
 * Links under the searched folder that lead outside the session's folders were neither read nor
 * listed: the model hears how many and a few of their names (inside the workspace), and that
 * read_file on one asks the user, as any read outside does.
 */
export function outsideNote(links: SkippedLinks): string | undefined {
  if (links.count === 0) return undefined;
  const more = links.count > links.shown.length ? `, and ${links.count - links.shown.length} more` : "";
  const what = links.count === 1 ? "1 link that leads" : `${links.count} links that lead`;
  return `Skipped ${what} outside the workspace folders: ${links.shown.join(", ")}${more}. read_file on one asks the user first.`;
}

export function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}
