/**
 * One window must not be able to make the daemon work or grow without bound: pipelined requests
 * meet backpressure, listing costs one page, and oversized params are refused at the edge.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { waitForDaemonPid } from "../support/harness.js";
import { daemonStatus, world, within, processTest } from "./fixture.js";

const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

processTest("10,000 pipelined requests with session/new mixed in: every one answered, memory bounded during and after the burst", async (t) => {
  // The daemon's memory is measured: it needs a process of its own.
  const { agent, workdir, home } = await world(t, { connector: "process" });
  await agent.initialize();
  const pid = await waitForDaemonPid(home.dir);
  const before = rssMiB(pid);
  const total = 10_000;
  let lines = "";
  for (let i = 0; i < total; i++) {
    const msg = i % 10 === 0 ? { method: "session/new", params: { cwd: workdir, mcpServers: [] } } : { method: "session/list", params: {} };
    lines += `${JSON.stringify({ jsonrpc: "2.0", id: `b${i}`, ...msg })}\n`;
  }
  const from = agent.messages.length;
  agent.writeRaw(lines);
  let peak = before;
  const answered = new Set<string>();
  let cursor = from;
  await within(
    120_000,
    "answers to the burst",
    (async () => {
      while (answered.size < total) {
        for (; cursor < agent.messages.length; cursor++) {
          const m = agent.messages[cursor];
          if (typeof m?.id === "string" && m.id.startsWith("b") && m.method === undefined) {
            assert.equal(m.error, undefined, JSON.stringify(m.error));
            answered.add(m.id);
          }
        }
        peak = Math.max(peak, rssMiB(pid));
        await agent.waitForLine(() => true, 5_000, cursor).catch(() => undefined);
      }
    })(),
  );
  assert.equal(answered.size, total, "every request answered");
  const live = (await daemonStatus(home.dir)).sessions.live;
  assert.equal(live, total / 10);
  await agent.closeStdin();
  // Sessions nobody prompted leave memory with their last window.
  const deadline = Date.now() + 10_000;
  while ((await daemonStatus(home.dir)).sessions.live > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const after = rssMiB(pid);
  t.diagnostic(`daemon RSS: ${before.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB peak, ${after.toFixed(0)} MiB after the window closed`);
  assert.equal((await daemonStatus(home.dir)).sessions.live, 0);
  // Before bounds and paging from the store, this burst took the daemon to 1.9 GB and it stayed there.
  assert.ok(peak < 600, `peak RSS ${peak.toFixed(0)} MiB stays under 600 MiB`);
  assert.ok(after < 400, `RSS ${after.toFixed(0)} MiB after the burst stays under 400 MiB`);
});

test("a prompt whose _meta nests 100,000 deep is refused with -32602 and the session still prompts", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  let meta = "1";
  for (let i = 0; i < 100_000; i++) meta = `{"a":${meta}}`;
  const line = `{"jsonrpc":"2.0","id":"deep","method":"session/prompt","params":{"sessionId":"${sessionId}","prompt":[{"type":"text","text":"hi","_meta":${meta}}]}}\n`;
  const from = agent.messages.length;
  agent.writeRaw(line);
  const answer = await agent.waitForLine((m) => m.id === "deep", 10_000, from);
  assert.equal(answer.error?.code, -32602);
  assert.match(answer.error.message, /prompt\[0\]\._meta.*nested deeper than 64 levels/);
  model.enqueue({ content: ["still ", "here"] });
  assert.equal((await agent.prompt(sessionId, "after the deep one")).stopReason, "end_turn");
  assert.equal(agent.textOf(sessionId), "still here");
  assert.equal(model.requests.length, 1, "the refused prompt never reached the model");
});
