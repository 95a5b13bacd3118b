/**
 * Issue 17, item 8 beside replay: `session/list` over 10,000 stored sessions (first page, and one
 * working directory's first page), and how many inbox enqueues a second the daemon acknowledges
 * (each is committed to disk before its answer): one session enqueuing one after another, and
 * twenty sessions enqueuing at once. The 10,000 sessions are written into the store before the
 * daemon starts, through the store and list index the daemon itself uses.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopDaemon, TEST_API_KEY } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";
import { fillSessions } from "./generate.js";
import { RawClient } from "./raw-client.js";
import { summarize, type Row } from "./stats.js";

const STORED = 10_000;

export async function scaleBench(opts: { lists: number }): Promise<{ rows: Row[]; detail: string }> {
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  const model = await ScriptedModel.start();
  const env = { REASONIX_HOME: home, DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: TEST_API_KEY };
  const cwds = Array.from({ length: 10 }, (_, i) => join(workdir, `project-${i}`));
  try {
    await fillSessions(home, STORED, cwds, 0);
    const w = new RawClient(env);
    await w.request("initialize", { protocolVersion: 1 });
    const all: number[] = [];
    const one: number[] = [];
    let firstPage = 0;
    for (let i = 0; i < opts.lists; i++) {
      let t = process.hrtime.bigint();
      firstPage = (await w.request("session/list", {})).sessions.length;
      all.push(Number(process.hrtime.bigint() - t) / 1e6);
      t = process.hrtime.bigint();
      await w.request("session/list", { cwd: cwds[i % cwds.length] });
      one.push(Number(process.hrtime.bigint() - t) / 1e6);
    }

    // Inbox: paused sessions, so every item stays queued and only the enqueue is measured.
    const sessions: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { sessionId } = await w.request("session/new", { cwd: workdir, mcpServers: [] });
      await w.request("_reasonix.io/session/inbox/setPaused", { sessionId, paused: true });
      sessions.push(sessionId);
    }
    const PER = 50;
    let t = process.hrtime.bigint();
    for (let i = 0; i < PER; i++) await w.request("_reasonix.io/session/inbox/enqueue", { sessionId: sessions[0], text: `follow-up ${i}`, intent: "followup" });
    const sequentialRate = PER / (Number(process.hrtime.bigint() - t) / 1e9);
    // An editor need not wait for one answer before sending the next: the same session, pipelined.
    t = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: PER }, (_, i) =>
        w.request("_reasonix.io/session/inbox/enqueue", { sessionId: sessions[1], text: `piped ${i}`, intent: "followup" }),
      ),
    );
    const pipelinedRate = PER / (Number(process.hrtime.bigint() - t) / 1e9);
    t = process.hrtime.bigint();
    await Promise.all(
      sessions.slice(2).map(async (sessionId) => {
        for (let i = 0; i < PER; i++) await w.request("_reasonix.io/session/inbox/enqueue", { sessionId, text: `follow-up ${i}`, intent: "followup" });
      }),
    );
    const concurrentRate = (PER * (sessions.length - 2)) / (Number(process.hrtime.bigint() - t) / 1e9);
    await w.close();
    return {
      rows: [
        summarize(`session/list first page over ${STORED} stored sessions`, all, 50),
        summarize(`session/list first page of one cwd (${STORED / cwds.length} of ${STORED})`, one, 50),
        { ...summarize("inbox enqueues acknowledged per second, one session one at a time", [sequentialRate], 500, "/s"), atLeast: true },
        { ...summarize(`inbox enqueues acknowledged per second, one session, ${PER} sent without waiting`, [pipelinedRate], 500, "/s"), atLeast: true },
        { ...summarize(`inbox enqueues acknowledged per second, ${sessions.length - 2} sessions at once`, [concurrentRate], 500, "/s"), atLeast: true },
      ],
      detail: `first page held ${firstPage} sessions; every enqueue is on disk (synced) before its answer`,
    };
  } finally {
    await stopDaemon(home);
    await model.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("scale.js")) {
  const { table } = await import("./stats.js");
  const r = await scaleBench({ lists: 20 });
  process.stdout.write(`${table(r.rows)}\n${r.detail}\n`);
}
