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
import type { WorkerReply, WorkerRequest } from "./search-worker.js";

/** A real file beside this one in dist, so it works wherever the compiled daemon runs from. */
const WORKER_URL = new URL("./search-worker.js", import.meta.url);

export const DEFAULT_STALL_MS = 10_000;
/** A whole search stops (keeping what it found) after this, or after the stall bound if longer. */
export const MIN_TOTAL_MS = 60_000;
/** A walk that lists a huge tree holds every path; more than that is a runaway. */
const WORKER_HEAP_MB = 256;

/** How long a thread whose search ended waits for the next one before it ends too. */
const IDLE_MS = 30_000;

/**
 * One daemon's search threads: its stall bound (searchTimeoutSeconds, read at each search, so a
 * changed config.json applies to the next one), how many searches run now, and one thread kept
 * between searches (a thread costs tens of milliseconds of CPU to start; a model often greps
 * several times in a turn). Made once per daemon: two daemons in one process (the in-process tests
 * make them) each keep their own bound, count and thread.
 */
export class SearchThreads implements SearchRunner {
  private count = 0;
  private idle: { worker: Worker; timer: NodeJS.Timeout; gone: () => void } | undefined;
  private closed = false;

  constructor(private readonly stallBound: () => number = () => DEFAULT_STALL_MS) {}

  /** Searches running now (for /metrics, and for tests that a stopped search left none). */
  get running(): number {
    return this.count;
  }

  run<S extends SearchSpec>(spec: S, opts: { signal: AbortSignal; stallMs?: number; totalMs?: number }): Promise<SearchOutcome<ResultOf<S>>> {
    if (opts.signal.aborted) return Promise.resolve({ status: "cancelled" });
    const stallMs = opts.stallMs ?? this.stallBound();
    const totalMs = opts.totalMs ?? Math.max(MIN_TOTAL_MS, stallMs);
    const job = { ...spec, deadline: Date.now() + totalMs } as SearchJob;
    this.count++;
    return watchWorker<S>(this.take(), job, opts.signal, stallMs, totalMs, (kept) => {
      this.count--;
      if (kept) this.keep(kept);
    });
  }

  /** The id (`threadId`) of the thread kept for the next search; undefined while none is. */
  get keptThread(): number | undefined {
    return this.idle?.worker.threadId;
  }

  /** Ends the thread kept for the next search (the daemon stops). */
  close(): void {
    this.closed = true;
    this.drop();
  }

  private take(): Worker {
    const idle = this.idle;
    if (idle === undefined) return new Worker(WORKER_URL, { env: {}, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    this.idle = undefined;
    clearTimeout(idle.timer);
    idle.worker.off("error", idle.gone).off("exit", idle.gone);
    idle.worker.ref();
    return idle.worker;
  }

  /** A thread whose search ended by itself waits for the next one; one waiting is enough. */
  private keep(worker: Worker): void {
    if (this.closed || this.idle !== undefined) {
      void worker.terminate();
      return;
    }
    // A waiting thread holds neither the daemon's loop nor its exit; one that fails or ends while
    // waiting is dropped (an error event without a listener would end the daemon).
    const gone = (): void => {
      if (this.idle?.worker === worker) this.drop();
    };
    worker.unref();
    worker.on("error", gone).on("exit", gone);
    this.idle = { worker, timer: setTimeout(() => this.drop(), IDLE_MS).unref(), gone };
  }

  private drop(): void {
    const idle = this.idle;
    if (idle === undefined) return;
    this.idle = undefined;
    clearTimeout(idle.timer);
    void idle.worker.terminate();
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
 * No progress for the bound is a stall only if the thread had the chance to make some. At a low
 * priority on a loaded machine a thread can wait seconds for a CPU: runnable all along but
 * given less than half the bound of CPU since it last moved, it is starved, not stuck, and the
 * search's whole deadline still bounds it. A thread blocked on a read (a hung file system) or one
 * that burned its CPU without moving (a stuck pattern) is stalled.
 */
function starved(tid: number, cpuAtMove: number, stallMs: number): boolean {
  const now = threadState(tid);
  return now !== undefined && now.state === "R" && now.cpuMs - cpuAtMove < stallMs / 2;
}

/**
 * Gives the job to the thread and settles with its outcome: at once when the thread answered (it is
 * handed to `done` to be kept), else once the thread is gone.
 */
function watchWorker<S extends SearchSpec>(
  worker: Worker,
  job: SearchJob,
  signal: AbortSignal,
  stallMs: number,
  totalMs: number,
  done: (kept: Worker | undefined) => void,
): Promise<SearchOutcome<ResultOf<S>>> {
  const shared = new SharedArrayBuffer(PROGRESS_SLOTS * Int32Array.BYTES_PER_ELEMENT);
  const progress = new Int32Array(shared);
  return new Promise((resolve) => {
    let settled = false;
    let watchdog: NodeJS.Timeout | undefined;
    // A stopped search waits for its thread to be gone, so it leaves no CPU burning behind it and
    // the count of searches is exact; a thread that answered is idle and can serve the next one.
    const finish = (outcome: SearchOutcome<ResultOf<S>>, answered: boolean): void => {
      if (settled) return;
      settled = true;
      clearInterval(watchdog);
      signal.removeEventListener("abort", onAbort);
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      if (answered) {
        done(worker);
        resolve(outcome);
        return;
      }
      const gone = (): void => {
        done(undefined);
        resolve(outcome);
      };
      worker.terminate().then(gone, gone);
    };
    const onAbort = (): void => finish({ status: "cancelled" }, false);
    const onMessage = (reply: WorkerReply): void => {
      if (reply.ok) {
        finish({ status: "done", result: reply.result as ResultOf<S>, timeLimitMs: totalMs }, true);
        return;
      }
      const error: Error & { code?: string } = new Error(reply.error.message);
      if (reply.error.code) error.code = reply.error.code;
      finish({ status: "failed", error }, true);
    };
    const onError = (err: Error): void => finish({ status: "crashed", message: err.message }, false);
    const onExit = (code: number): void => finish({ status: "crashed", message: `the search thread ended with code ${code} before it answered` }, false);
    signal.addEventListener("abort", onAbort, { once: true });
    worker.once("message", onMessage).once("error", onError).once("exit", onExit);
    worker.postMessage({ job, progress: shared } satisfies WorkerRequest);

    // The stall clock starts at the job's first tick, so starting a thread under load is no stall;
    // a thread that never gets going is stopped once the whole search's time is up.
    const started = performance.now();
    let lastTicks = 0;
    let lastMove = started;
    let cpuAtMove: number | undefined;
    watchdog = setInterval(
      () => {
        const ticks = Atomics.load(progress, TICKS);
        const now = performance.now();
        // A kept thread's clock holds its earlier searches too: this one counts from when it is first seen.
        cpuAtMove ??= threadState(Atomics.load(progress, THREAD))?.cpuMs;
        if (ticks !== lastTicks) {
          lastTicks = ticks;
          lastMove = now;
          cpuAtMove = threadState(Atomics.load(progress, THREAD))?.cpuMs ?? 0;
        } else if (ticks > 0 && now - lastMove >= stallMs && !starved(Atomics.load(progress, THREAD), cpuAtMove ?? 0, stallMs)) {
          finish({ status: "stalled", matching: Atomics.load(progress, MATCHING) === 1, boundMs: stallMs }, false);
        } else if (now - started >= totalMs + stallMs) {
          finish({ status: "crashed", message: overtime(totalMs + stallMs, Atomics.load(progress, THREAD), cpuAtMove, now - lastMove) }, false);
        }
      },
      Math.max(10, Math.min(250, stallMs / 10)),
    );
    watchdog.unref();
  });
}

/**
 * Why a search outlived its whole deadline, from the thread's own state: one that had its CPU and
 * made no progress was stopped as stalled long before, so this one was kept from running — by a
 * busy machine (runnable, with the CPU it had since it last moved as the figure) or by a file
 * system that does not answer (asleep in a read).
 */
export function overtime(boundMs: number, tid: number, cpuAtMove: number | undefined, sinceMoveMs: number): string {
  const text = `the search thread did not finish within ${seconds(boundMs)} s`;
  const now = threadState(tid);
  if (now === undefined) return text;
  if (now.state !== "R") return `${text}; it was waiting on the file system`;
  return `${text}; the machine is busy: in the last ${seconds(sinceMoveMs)} s it had ${seconds(now.cpuMs - (cpuAtMove ?? 0))} s of CPU`;
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
