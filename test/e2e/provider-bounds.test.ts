/**
 * A provider's answer is bounded per round (issue 22, "Least authority"): one answer of 512 MiB of
 * reasoning was kept whole in memory and in the ledger, and loading the session then took 23 s and
 * 1.6 GB. Past a part's bound the stream is stopped, the turn ends with a warning, the ledger keeps
 * what came up to the bound, and the session loads small and fast after a restart. Real processes:
 * what is measured is the daemon process's memory.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { stopDaemon, waitForDaemonPid } from "../support/harness.js";
import { world, processTest } from "./fixture.js";

const MiB = 1024 * 1024;

/** kB of a /proc/<pid>/status field (VmRSS, VmHWM); 0 once the process is gone. */
function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's resident memory every 20 ms until stopped; the peak is the larger of the samples and the kernel's high-water mark. */
function sampleRss(pid: number): { stop(): { sampledMb: number; hwmMb: number } } {
  let peak = statusKb(pid, "VmRSS");
  const timer = setInterval(() => (peak = Math.max(peak, statusKb(pid, "VmRSS"))), 20);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, statusKb(pid, "VmRSS"));
      return { sampledMb: peak / 1024, hwmMb: statusKb(pid, "VmHWM") / 1024 };
    },
  };
}

processTest("256 MiB of reasoning in one answer: cut at 4 MiB with a warning, the daemon stays small, and the session loads after a restart", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { connector: "process" });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const pid = await waitForDaemonPid(home.dir);

  // 4096 pieces of 64 KiB: the scripted model makes them as it writes, and stops when the daemon hangs up.
  model.enqueue({ generate: { part: "reasoning", chunks: 4096, size: 64 * 1024 } });
  const streaming = sampleRss(pid);
  const answer = await agent.prompt(sessionId, "think hard", { timeoutMs: 120_000 });
  const streamed = streaming.stop();
  t.diagnostic(`daemon during the turn: peak VmRSS sampled ${streamed.sampledMb.toFixed(0)} MB, VmHWM ${streamed.hwmMb.toFixed(0)} MB`);

  assert.equal(answer.stopReason, "max_tokens");
  const thoughts = agent.textOf(sessionId, "agent_thought_chunk");
  assert.equal(thoughts, "x".repeat(4 * MiB), "every piece up to the bound, none past it");
  assert.match(agent.textOf(sessionId), /\n\n\[warning\] The model's reasoning passed 4 MiB in one round; the stream was stopped\.$/);
  assert.equal(model.aborted, 1, "the request was aborted, not read to its end");
  assert.ok(Math.max(streamed.sampledMb, streamed.hwmMb) < 600, `the daemon reached ${Math.max(streamed.sampledMb, streamed.hwmMb).toFixed(0)} MB`);

  // A restart: the session comes back from the store alone.
  await agent.kill();
  await stopDaemon(home.dir);
  const window = spawn();
  await window.initialize();
  const restarted = await waitForDaemonPid(home.dir);
  assert.notEqual(restarted, pid);
  const loading = sampleRss(restarted);
  const started = performance.now();
  await window.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] }, { timeoutMs: 60_000 });
  const loadMs = performance.now() - started;
  const loaded = loading.stop();
  t.diagnostic(
    `session/load after the restart: ${loadMs.toFixed(0)} ms; peak VmRSS sampled ${loaded.sampledMb.toFixed(0)} MB, VmHWM ${loaded.hwmMb.toFixed(0)} MB`,
  );
  assert.equal(window.textOf(sessionId, "agent_thought_chunk"), thoughts, "the ledger kept what was shown, no more");
  assert.match(window.textOf(sessionId), /\[warning\] The model's reasoning passed 4 MiB in one round; the stream was stopped\.$/);
  assert.ok(Math.max(loaded.sampledMb, loaded.hwmMb) < 400, `the daemon reached ${Math.max(loaded.sampledMb, loaded.hwmMb).toFixed(0)} MB while loading`);

  // The next request carries a note where the runaway round was, not its reasoning.
  model.enqueue({ content: ["Understood."] });
  assert.equal((await window.prompt(sessionId, "go on")).stopReason, "end_turn");
  const messages = model.requests.at(-1)!.body.messages as Array<{ role: string; content: string; reasoning_content?: string }>;
  assert.deepEqual(messages.at(-2), {
    role: "assistant",
    content: "[This answer is incomplete: the model's reasoning passed 4 MiB in one round, so the stream was stopped; no tool call of it was run.]",
  });
  assert.ok(model.requests.at(-1)!.rawBody.length < 64 * 1024, `the request is ${model.requests.at(-1)!.rawBody.length} bytes`);
});

test("tool-call arguments past 4 MiB: the call is not run, the model is not asked again, and the turn ends with the warning", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["Writing it."], generate: { part: "arguments", chunks: 1024, size: 64 * 1024, name: "write_file" } });
  const answer = await agent.prompt(sessionId, "write a big file", { timeoutMs: 60_000 });
  assert.equal(answer.stopReason, "max_tokens");
  assert.equal(model.requests.length, 1, "no second round");
  assert.deepEqual(
    agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "tool_call"),
    [],
    "no tool call was reported, none ran",
  );
  assert.equal(
    agent.textOf(sessionId),
    "Writing it.\n\n[warning] The model's tool-call arguments passed 4 MiB in one round; the stream was stopped and no tool was run.",
  );

  // The text of the round stays in the history with the note; the next request is small.
  model.enqueue({ content: ["ok"] });
  await agent.prompt(sessionId, "again");
  const sent = model.requests.at(-1)!;
  assert.equal(
    sent.body.messages.at(-2).content,
    "Writing it.\n\n[This answer is incomplete: the model's tool-call arguments passed 4 MiB in one round, so the stream was stopped; no tool call of it was run.]",
  );
  assert.equal(sent.body.messages.at(-2).tool_calls, undefined);
  assert.ok(sent.rawBody.length < 64 * 1024);
});

test("one event of more than 16 Mi characters: the stream is stopped there, with the events before it kept", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const chunk = (delta: object) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta }] })}\n\n`;
  // A single data line that never ends: the parser used to keep all of it, and search all of it at every read.
  const text = `${chunk({ role: "assistant", content: "Before " })}data: ${"x".repeat(17 * 1024 * 1024)}`;
  model.enqueue({ body: { contentType: "text/event-stream", text } });
  const answer = await agent.prompt(sessionId, "one huge event", { timeoutMs: 60_000 });
  assert.equal(answer.stopReason, "max_tokens");
  assert.equal(agent.textOf(sessionId), "Before \n\n[warning] The provider sent one event of more than 16 Mi characters; the stream was stopped.");
});

test("a ledger of more records than one replay page (256) loads whole and in order", async (t) => {
  const { agent, model, workdir, spawn } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  // Each call is three records (tool_call, in_progress, failed): 360 and more in one turn.
  const calls = Array.from({ length: 120 }, (_, i) => ({ id: `r${i}`, name: "read_file", arguments: { path: `missing-${i}.txt` } }));
  model.enqueue({ toolCalls: calls }, { content: ["None of them exist."] });
  await agent.prompt(sessionId, "read them all");
  const live = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
  assert.ok(live.length > 360, `${live.length} updates`);

  const window = spawn();
  await window.initialize();
  await window.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  const replay = window.updatesFor(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
  assert.deepEqual(replay[0], { sessionUpdate: "user_message_chunk", content: { type: "text", text: "read them all" }, messageId: replay[0].messageId });
  assert.deepEqual(replay.slice(1), live);
});
