/**
 * The search worker's entry: one job from workerData, one message back, then the thread ends. The
 * daemon terminates it instead when it stalls or the call is cancelled (search-thread.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { runSearchJob, type SearchJob } from "./search-job.js";

export type WorkerReply =
  | { ok: true; result: ReturnType<typeof runSearchJob> }
  | { ok: false; error: { message: string; code: string | undefined } };

const { job, progress } = workerData as { job: SearchJob; progress: SharedArrayBuffer };
let reply: WorkerReply;
try {
  reply = { ok: true, result: runSearchJob(job, new Int32Array(progress)) };
} catch (err) {
  const code = (err as { code?: unknown } | null)?.code;
  reply = { ok: false, error: { message: err instanceof Error ? err.message : String(err), code: typeof code === "string" ? code : undefined } };
}
parentPort!.postMessage(reply);
