/**
 * Long sessions: a scripted 60-prompt session against a provider whose `contextWindow` holds only a
 * handful of turns, so the context crosses the window again and again. Measured: how much of each
 * model request's prompt (tools, then messages) the next request repeats byte for byte as its prefix
 * (the prefix cache's view, compactions included), how many compactions ran, and the largest
 * request relative to the window (in the scripted model's own count, a quarter of the prompt's
 * characters, which is what it reports as `prompt_tokens`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopDaemon, TEST_API_KEY } from "../support/harness.js";
import { ScriptedModel, type RecordedRequest } from "../support/scripted-model.js";
import { commonPrefix, promptBytes } from "./prefix.js";
import { RawClient } from "./raw-client.js";
import type { Row } from "./stats.js";

const WINDOW = 16_000;
const PROMPTS = 60;

const isSummary = (r: RecordedRequest): boolean => /about to be compacted/.test(r.body?.messages?.at(-1)?.content ?? "");

export async function compactionBench(): Promise<{ rows: Row[]; detail: string }> {
  const home = mkdtempSync(join(tmpdir(), "rx-bc-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bcw-"));
  writeFileSync(join(workdir, "app.ts"), "export function answer(): number {\n  return 42;\n}\n".repeat(30));
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      providers: [
        { name: "deepseek", baseUrl: "https://api.deepseek.com", apiKeyEnv: "DEEPSEEK_API_KEY", models: ["deepseek-v4-flash"], contextWindow: WINDOW },
      ],
    }),
  );
  const model = await ScriptedModel.start();
  model.contextWindow = WINDOW;
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  let n = 0;
  // Every other prompt reads a file first; answers are a few hundred characters.
  model.respond = (req) => {
    n++;
    if (isSummary(req)) return { content: [`Summary ${n}: the user asked questions about app.ts; the answer is 42 throughout; files read: app.ts.`] };
    const last = req.body.messages.at(-1);
    if (last.role !== "tool" && n % 2 === 1) return { content: ["Checking."], toolCalls: [{ name: "read_file", arguments: { path: "app.ts", limit: 40 } }] };
    return { content: [`Answer ${n}: `, "the value is 42. ".repeat(12)] };
  };
  try {
    const client = new RawClient(env);
    await client.request("initialize", { protocolVersion: 1 });
    const { sessionId } = await client.request("session/new", { cwd: workdir, mcpServers: [] });
    await client.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
    for (let i = 0; i < PROMPTS; i++) {
      const text = `Question ${i}: what does answer() in app.ts return, and why? ${"Explain the reasoning in detail. ".repeat(8)}`;
      const r = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      if (r.stopReason !== "end_turn") throw new Error(`prompt ${i} ended with ${r.stopReason}`);
    }
    await client.close();
    const reqs = model.requests;
    let repeated = 0;
    let previousTotal = 0;
    const kept: number[] = [];
    for (let i = 1; i < reqs.length; i++) {
      const prev = promptBytes(reqs[i - 1]!);
      const same = commonPrefix(prev, promptBytes(reqs[i]!));
      repeated += same;
      previousTotal += Buffer.byteLength(prev);
      kept.push((same / Buffer.byteLength(prev)) * 100);
    }
    const compactions = reqs.filter(isSummary).length;
    const sizes = reqs.map((r) => (model.promptTokens(r) / WINDOW) * 100);
    const largest = Math.max(...sizes);
    const share = (repeated / previousTotal) * 100;
    kept.sort((a, b) => a - b);
    const summaryShare = (reqs.filter(isSummary).reduce((s, r) => s + model.promptTokens(r), 0) / reqs.reduce((s, r) => s + model.promptTokens(r), 0)) * 100;
    return {
      rows: [
        {
          name: `prompt bytes repeating the previous request's prefix, ${PROMPTS} prompts over a ${WINDOW}-token window`,
          n: kept.length,
          median: kept[Math.floor(kept.length / 2)]!,
          p90: kept[Math.min(kept.length - 1, Math.ceil(kept.length * 0.9) - 1)]!,
          min: kept[0]!,
          max: kept.at(-1)!,
          target: undefined,
          unit: "%",
        },
        {
          name: "largest request relative to the window (all requests)",
          n: 1,
          median: largest,
          p90: largest,
          min: largest,
          max: largest,
          target: 100,
          unit: "%",
        },
      ],
      detail:
        `${PROMPTS} prompts, ${reqs.length} requests, ${compactions} compactions (one summary request each, ${summaryShare.toFixed(1)}% of all prompt tokens). ` +
        `${share.toFixed(3)}% of the previous requests' prompt bytes came back as the next request's prefix (99.989% without compaction, in the 20-prompt run above); ` +
        `the request after a summary keeps only the tools and system prompt (lowest ${kept[0]!.toFixed(1)}%). ` +
        `Largest request: ${largest.toFixed(1)}% of the ${WINDOW}-token window; none was refused.`,
    };
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}
