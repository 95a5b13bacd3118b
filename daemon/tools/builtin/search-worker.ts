/**
 * The search worker's entry: jobs one at a time, each a message with the job and its progress
 * slots in, one message back. The thread is kept between searches (starting one costs tens of
 * milliseconds of CPU); the daemon terminates it instead when a search stalls or its call is
 * cancelled (search-thread.ts), and a new thread serves the next search.
 */
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { runSearchJob, THREAD } from "./search-job.js";
import type { SearchJob } from "../search-types.js";
import { errorText } from "../../../shared/error-text.js";

export type WorkerReply = { ok: true; result: ReturnType<typeof runSearchJob> } | { ok: false; error: { message: string; code: string | undefined } };

/** What the daemon sends for each search. */
export interface WorkerRequest {
  job: SearchJob;
  progress: SharedArrayBuffer;
}

/** How far below the loop thread's priority the search thread runs (Linux nice steps). */
const NICE_STEPS = 10;

const tid = lowerPriority();
parentPort!.on("message", ({ job, progress }: WorkerRequest) => {
  const slots = new Int32Array(progress);
  Atomics.store(slots, THREAD, tid);
  let reply: WorkerReply;
  try {
    reply = { ok: true, result: runSearchJob(job, slots) };
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    reply = { ok: false, error: { message: errorText(err), code: typeof code === "string" ? code : undefined } };
  }
  parentPort!.postMessage(reply);
});

/**
 * A search that burns a core (a stuck pattern, until the watchdog ends it) must not take it from
 * the daemon's event-loop thread. Linux schedules each thread as a task of its own, so this thread
 * alone can go to a low priority; where that is not possible the search runs as it is.
 * Ten steps (nice 10 for a daemon at 0), not the lowest, 19: beside three busy processes on two cores the loop's p99 delay was the same at
 * either (4.2–4.5 against 4.0–4.4 ms), but a nice-19 thread got 1% of a CPU, so a real search
 * crawled and a stuck pattern took a minute to be judged stalled; at nice 10 it gets 7%.
 * Returns the thread's task id, 0 where there is none to give.
 */
function lowerPriority(): number {
  let tid = 0;
  try {
    tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return 0;
    setPriority(tid, Math.min(19, getPriority(tid) + NICE_STEPS));
  } catch {
    // No /proc/thread-self (not Linux) or not allowed: same priority as the daemon.
  }
  return tid;
}
