/**
 * Prefix stability: over a scripted 20-turn session with tool calls, steers, follow-ups and setting
 * changes, how much of each model request's prompt (tools, then messages, as the provider reads
 * them) the next request repeats byte for byte as its prefix. An append-only agent keeps all of it;
 * any rewrite (a system prompt that changes, a reordered tool list, an edited message) shows up as
 * a drop. Also reported: the share of all prompt bytes that were such repeats, which is bounded by
 * how much new text each round adds.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopDaemon, TEST_API_KEY } from "../support/harness.js";
import { ScriptedModel, type RecordedRequest } from "../support/scripted-model.js";
import { RawClient } from "./raw-client.js";
import type { Row } from "./stats.js";

const STEER = "_reasonix.io/session/steer";
const ENQUEUE = "_reasonix.io/session/inbox/enqueue";

export function promptBytes(r: RecordedRequest): string {
  return JSON.stringify({ tools: r.body.tools, messages: r.body.messages });
}

export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return Buffer.byteLength(a.slice(0, i));
}

export async function prefixBench(): Promise<{ rows: Row[]; detail: string }> {
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  writeFileSync(join(workdir, "app.ts"), "export const answer = 42;\n".repeat(40));
  const model = await ScriptedModel.start();
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  let n = 0;
  // Every other round calls a tool; answers stream slowly enough for a steer to land mid-turn.
  model.respond = (req) => {
    n++;
    const last = req.body.messages.at(-1);
    if (last.role !== "tool" && n % 2 === 1)
      return { content: ["Checking."], toolCalls: [{ name: "read_file", arguments: { path: "app.ts", limit: 10 } }], chunkDelayMs: 20 };
    return { content: [`Answer ${n}: `, "the value is 42."], chunkDelayMs: 20 };
  };
  try {
    const client = new RawClient(env);
    await client.request("initialize", { protocolVersion: 1 });
    const { sessionId } = await client.request("session/new", { cwd: workdir, mcpServers: [] });
    await client.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
    let turns = 0;
    for (let i = 0; i < 20; i++) {
      if (i === 7) await client.request("session/set_config_option", { sessionId, configId: "effort", value: "high" });
      if (i === 12) await client.request("session/set_mode", { sessionId, modeId: "plan" });
      if (i === 14) await client.request("session/set_mode", { sessionId, modeId: "normal" });
      const turn = client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `Question ${i}: what is the answer in app.ts?` }] });
      if (i % 5 === 2) {
        await new Promise((r) => setTimeout(r, 15));
        await client.request(STEER, { sessionId, prompt: [{ type: "text", text: `Steer ${i}: be brief.` }] });
      }
      await turn;
      turns++;
      if (i % 6 === 3) await client.request(ENQUEUE, { sessionId, text: `Follow-up after ${i}: double-check it.`, intent: "followup" });
    }
    // Let queued follow-ups finish.
    for (let waited = 0; waited < 5000; waited += 100) {
      const list = await client.request("_reasonix.io/session/inbox/list", { sessionId });
      if (list.items.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await client.close();
    const reqs = model.requests;
    let repeated = 0;
    let previousTotal = 0;
    let total = 0;
    const kept: number[] = [];
    for (let i = 1; i < reqs.length; i++) {
      const prev = promptBytes(reqs[i - 1]!);
      const cur = promptBytes(reqs[i]!);
      const same = commonPrefix(prev, cur);
      repeated += same;
      previousTotal += Buffer.byteLength(prev);
      total += Buffer.byteLength(cur);
      kept.push((same / Buffer.byteLength(prev)) * 100);
    }
    const keptShare = (repeated / previousTotal) * 100;
    const allShare = (repeated / total) * 100;
    kept.sort((a, b) => a - b);
    return {
      rows: [
        {
          name: `previous request's prompt repeated as the next one's prefix (${reqs.length} requests, ${turns} prompts)`,
          n: kept.length,
          median: kept[Math.floor(kept.length / 2)]!,
          p90: kept[Math.min(kept.length - 1, Math.ceil(kept.length * 0.9) - 1)]!,
          min: kept[0]!,
          max: kept.at(-1)!,
          target: 99,
          unit: "%",
          atLeast: true,
        },
      ],
      detail:
        `${keptShare.toFixed(3)}% of the previous requests' prompt bytes came back as the next request's prefix ` +
        `(target >= 99%; lowest single request ${kept[0]!.toFixed(3)}%). Of all ${total} prompt bytes sent, ` +
        `${allShare.toFixed(2)}% were such repeats; the rest is what each round newly adds.`,
    };
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}
