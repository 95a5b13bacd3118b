/**
 * The scripted model in a process of its own, for the streaming benchmark with BENCH_MODEL_PROCESS=1:
 * a provider never shares an event loop with the editors, as the model in the benchmark's own
 * process shares one with the clients' parsing of 10,000 notifications and the probes. Streams
 * `STREAM_CHUNKS` chunks (`c0 `, `c1 `, …) `STREAM_DELAY_MS` apart to every request but the warm-up
 * turn's (answered "ok"). Prints `url <url>` once listening, then `asked <ms>` (epoch
 * milliseconds) for each streamed request; exits when its stdin closes.
 */
import { ScriptedModel } from "../support/scripted-model.js";

const chunks = Number(process.env.STREAM_CHUNKS ?? 200);
const delayMs = Number(process.env.STREAM_DELAY_MS ?? 5);
const model = await ScriptedModel.start();
model.respond = (req) => {
  if (JSON.stringify(req.body.messages?.at(-1)?.content ?? "").includes("warm up")) return { content: ["ok"] };
  process.stdout.write(`asked ${performance.timeOrigin + performance.now()}\n`);
  return { content: Array.from({ length: chunks }, (_, i) => `c${i} `), chunkDelayMs: delayMs };
};
process.stdout.write(`url ${model.url}\n`);
process.stdin.resume();
process.stdin.on("end", () => void model.close().then(() => process.exit(0)));
