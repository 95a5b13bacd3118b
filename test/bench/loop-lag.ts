/**
 * Event-loop lag inside the daemon while 20 sessions stream and one more runs the catastrophic grep
 * of issue 10: `(a+)+$` over a line of 40 a's and a "b", which backtracks about 2^40 ways and used
 * to hold every window's loop for as long as it ran. The lag is the daemon's own measure:
 * prom-client's perf_hooks histogram behind /metrics, which each scrape reads and resets, so one
 * scrape before the load and one after give the p99 and max over exactly that window. The same
 * load without the grep runs first, side by side.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopDaemon, TEST_API_KEY } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";
import { gauge, getText } from "../support/daemon-http.js";
import { RawClient } from "./raw-client.js";
import { summarize, type Row } from "./stats.js";

const STREAMERS = 20;
const CHUNK_DELAY_MS = 20;

interface Window {
  p99Ms: number;
  maxMs: number;
  seconds: number;
}

export async function loopLagBench(): Promise<{ rows: Row[]; detail: string }> {
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  writeFileSync(join(workdir, "evil.txt"), `${"a".repeat(40)}b\n`);
  const model = await ScriptedModel.start();
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  let chunks = 0;
  model.respond = (req) => {
    const last = req.body.messages.at(-1);
    if (last.role === "tool") return { content: ["The pattern was too slow."] };
    if (JSON.stringify(last.content).includes("grep")) return { toolCalls: [{ name: "grep", arguments: { pattern: "(a+)+$" } }] };
    return { content: Array.from({ length: chunks }, (_, i) => `word${i} `), chunkDelayMs: CHUNK_DELAY_MS };
  };
  try {
    const windows: RawClient[] = [];
    const sessions: string[] = [];
    for (let i = 0; i <= STREAMERS; i++) {
      const w = new RawClient(env);
      await w.request("initialize", { protocolVersion: 1 });
      sessions.push((await w.request("session/new", { cwd: workdir, mcpServers: [] })).sessionId);
      windows.push(w);
    }
    const socketPath = JSON.parse(readFileSync(join(home, "run", "daemon.json"), "utf8")).socket as string;

    /** The streamers' turns, and the grep's if asked, inside one measured window. */
    const measure = async (withGrep: boolean): Promise<Window & { grepSeconds?: number }> => {
      await getText(socketPath, "/metrics"); // starts (or resets) the daemon's histogram
      const started = process.hrtime.bigint();
      const streams = windows
        .slice(0, STREAMERS)
        .map((w, i) => w.request("session/prompt", { sessionId: sessions[i], prompt: [{ type: "text", text: "talk" }] }));
      let grepSeconds: number | undefined;
      if (withGrep) {
        const g = process.hrtime.bigint();
        await windows[STREAMERS]!.request("session/prompt", { sessionId: sessions[STREAMERS], prompt: [{ type: "text", text: "grep for it" }] });
        grepSeconds = Number(process.hrtime.bigint() - g) / 1e9;
      }
      await Promise.all(streams);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const metrics = await getText(socketPath, "/metrics");
      return {
        p99Ms: gauge(metrics, "reasonix_nodejs_eventloop_lag_p99_seconds") * 1000,
        maxMs: gauge(metrics, "reasonix_nodejs_eventloop_lag_max_seconds") * 1000,
        seconds,
        ...(grepSeconds === undefined ? {} : { grepSeconds }),
      };
    };

    // Streams outlast the grep, which the daemon stops after searchTimeoutSeconds (default 10 s).
    chunks = 600;
    const quiet = await measure(false);
    const before = model.requests.length;
    const loaded = await measure(true);
    const toolMessage = model.requests
      .slice(before)
      .flatMap((r) => r.body.messages as { role: string; content: string }[])
      .find((m) => m.role === "tool");
    for (const w of windows) await w.close();
    const label = `${STREAMERS} sessions streaming`;
    return {
      rows: [
        summarize(`daemon event-loop lag p99, ${label}`, [quiet.p99Ms], 50),
        summarize(`daemon event-loop lag p99, ${label} + one catastrophic grep`, [loaded.p99Ms], 50),
      ],
      detail:
        `without the grep, p99 ${quiet.p99Ms.toFixed(1)} ms and max ${quiet.maxMs.toFixed(1)} ms over ${quiet.seconds.toFixed(1)} s; ` +
        `with it, p99 ${loaded.p99Ms.toFixed(1)} ms and max ${loaded.maxMs.toFixed(1)} ms over ${loaded.seconds.toFixed(1)} s, ` +
        `the grep's turn taking ${loaded.grepSeconds?.toFixed(1)} s and its tool answering: ${JSON.stringify(toolMessage?.content?.slice(0, 60) ?? "(none)")}`,
    };
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}
