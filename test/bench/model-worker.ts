/**
 * The scripted model of the streaming benchmark, on a worker thread: a provider never shares an
 * event loop with the editors, and in the benchmark's own loop the model's writes and the clients'
 * reading of 10,000 notifications delayed each other, so neither the model's pace nor the times
 * the clients stamped were the daemon's doing. A thread rather than a process: the send times go
 * into shared memory instead of 10,000 lines over a pipe.
 * Streams `chunks` chunks (`c0 `, `c1 `, …) `delayMs` apart at a steady pace to the prompt
 * "talk k", recording when the request for session k arrived (`asked[k]`) and when chunk i was
 * written (`sent[k × chunks + i]`), in epoch milliseconds; the warm-up turn is answered "ok".
 */
import { parentPort, workerData } from "node:worker_threads";
import { ScriptedModel } from "../support/scripted-model.js";

export interface ModelWorkerData {
  chunks: number;
  delayMs: number;
  asked: SharedArrayBuffer;
  sent: SharedArrayBuffer;
}

const { chunks, delayMs, asked, sent } = workerData as ModelWorkerData;
const askedAt = new Float64Array(asked);
const sentAt = new Float64Array(sent);
const now = (): number => performance.timeOrigin + performance.now();

const model = await ScriptedModel.start();
model.respond = (req) => {
  const said = JSON.stringify(req.body.messages?.at(-1)?.content ?? "");
  // "warm k": the same stream, not recorded (BENCH_WARM_ROUNDS in streaming.ts).
  if (/warm \d+/.test(said)) return { content: Array.from({ length: chunks }, (_, i) => `c${i} `), chunkDelayMs: delayMs, steadyPace: true };
  const k = Number(/talk (\d+)/.exec(said)?.[1] ?? Number.NaN);
  if (!Number.isInteger(k)) return { content: ["ok"] };
  askedAt[k] = now();
  // Event 0 is the opening chunk with the role; content piece i is event i + 1.
  const onSent = (event: number): void => {
    if (event >= 1 && event <= chunks) sentAt[k * chunks + event - 1] = now();
  };
  return { content: Array.from({ length: chunks }, (_, i) => `c${i} `), chunkDelayMs: delayMs, steadyPace: true, onSent };
};
parentPort!.postMessage(model.url);
parentPort!.once("message", () => {
  void model.close().then(() => parentPort!.close());
});
