/**
 * Durable-session benchmarks: replay of a 10,000-event session through session/load, and the
 * daemon's resident memory with 200 stored and 20 live sessions; then session-size.ts: loads of
 * 100,000 updates and 1,000 attached idle sessions.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { daemonPid, stopDaemon, TEST_API_KEY, waitForDaemonPid } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";
import { RawClient } from "./raw-client.js";
import { idleSessionsBench, longLoadBench } from "./session-size.js";
import { summarize, type Row } from "./stats.js";

export function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
  return kb / 1024;
}

export async function sessionsBench(opts: { loads: number }): Promise<Row[]> {
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  const model = await ScriptedModel.start();
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  const rows: Row[] = [];
  try {
    // One session whose ledger holds 10,000 streamed chunks (plus the prompt and title).
    const writer = new RawClient(env);
    await writer.request("initialize", { protocolVersion: 1 });
    const { sessionId } = await writer.request("session/new", { cwd: workdir, mcpServers: [] });
    model.enqueue({ content: Array.from({ length: 10_000 }, (_, i) => `token ${i} `) });
    await writer.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "a long answer" }] });
    await writer.close();

    const replayMs: number[] = [];
    let delivered = 0;
    for (let i = 0; i < opts.loads; i++) {
      const reader = new RawClient(env);
      await reader.request("initialize", { protocolVersion: 1 });
      const started = process.hrtime.bigint();
      await reader.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
      replayMs.push(Number(process.hrtime.bigint() - started) / 1e6);
      delivered = reader.notifications;
      await reader.close();
    }
    const replay = summarize(`session/load of a 10,000-event session (${delivered} updates delivered before the answer)`, replayMs, 300);
    rows.push(replay);

    // 200 stored sessions, then a fresh daemon with 20 of them live.
    const filler = new RawClient(env);
    await filler.request("initialize", { protocolVersion: 1 });
    const ids: string[] = [];
    model.respond = () => ({ reasoning: ["thinking about it"], content: ["A short answer with a few words in it."] });
    for (let i = 0; i < 199; i++) {
      const s = await filler.request("session/new", { cwd: workdir, mcpServers: [] });
      await filler.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: `question ${i}` }] });
      ids.push(s.sessionId);
    }
    await filler.close();
    await stopDaemon(home);

    const windows: RawClient[] = [];
    for (let i = 0; i < 20; i++) {
      const w = new RawClient(env);
      await w.request("initialize", { protocolVersion: 1 });
      await w.request("session/load", { sessionId: ids[i], cwd: workdir, mcpServers: [] });
      windows.push(w);
    }
    const pid = await waitForDaemonPid(home);
    if (global.gc) global.gc();
    await new Promise((r) => setTimeout(r, 500));
    rows.push(summarize("daemon resident memory, 200 stored + 20 live sessions", [rssMiB(pid)], 150, "MiB"));
    for (const w of windows) await w.close();
    void daemonPid;
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
  rows.push(...(await longLoadBench({ loads: Math.min(opts.loads, 5) })));
  rows.push(...(await idleSessionsBench({ runs: opts.loads > 3 ? 2 : 1 })));
  return rows;
}
