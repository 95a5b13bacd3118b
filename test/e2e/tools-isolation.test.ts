/**
 * What one session's tools may not do to others (issue 10): hold the daemon's event loop with a
 * model's regex, or write through a hard link to a file outside the workspace.
 */
import assert from "node:assert/strict";
import { chmodSync, linkSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { world, test, processTest } from "./fixture.js";
import { watchChunks } from "../support/stream-gaps.js";
import { MIN_TOTAL_MS } from "../../daemon/tools/builtin/search-thread.js";

// Process connector only: the daemon's liveness is watched from outside it (a stall in this process would
// stall the watcher too), and the search bound is still a process global (issue 24).
processTest("a catastrophic grep in one session: another session's stream keeps flowing, and the grep fails with a clear error", async (t) => {
  const { agent, model, workdir, spawn } = await world(t, { connector: "process", env: { REASONIX_SEARCH_TIMEOUT_SECONDS: "1" } });
  // (a+)+$ against 40 a's and a "b" backtracks about 2^40 ways: days, on the old in-loop grep.
  writeFileSync(join(workdir, "evil.txt"), `${"a".repeat(40)}b\n`);
  const other = spawn();
  await Promise.all([agent.initialize(), other.initialize()]);
  const { sessionId: grepper } = await agent.newSession(workdir);
  const { sessionId: talker } = await other.newSession(workdir);

  // Far longer than the grep can take, 70 s: the talker is cancelled once the grep is over. At
  // its low priority beside a CPU-bound suite, the stuck thread may need tens of seconds to burn the
  // half second of CPU that marks it stalled (search-thread.ts), up to the search's own deadline.
  const long = { timeoutMs: MIN_TOTAL_MS + 30_000 };
  model.enqueue(
    { content: Array.from({ length: 14_000 }, (_, i) => `word${i} `), chunkDelayMs: 5 },
    { toolCalls: [{ id: "grep-1", name: "grep", arguments: { pattern: "(a+)+$" } }] },
    { content: ["That pattern was too slow."] },
  );
  const arrivals = watchChunks(other, talker);
  const talking = other.prompt(talker, "talk for a while", long);
  await other.waitForUpdate((u) => u.sessionId === talker && u.update.sessionUpdate === "agent_message_chunk");

  const grepping = agent.prompt(grepper, "grep for it", long);
  const call = await agent.waitForUpdate((u) => u.sessionId === grepper && u.update.sessionUpdate === "tool_call");
  const started = performance.now();
  assert.equal(call.update.title, "Grep (a+)+$");
  const failed = await agent.waitForUpdate(
    (u) => u.sessionId === grepper && u.update.toolCallId === call.update.toolCallId && u.update.status === "failed",
    MIN_TOTAL_MS + 10_000,
  );
  const ended = performance.now();
  assert.equal((await grepping).stopReason, "end_turn");
  // The talker was still streaming when the grep ended: the window measured is all inside its stream.
  const afterGrep = other.updates.length;
  await other.waitForUpdate((u) => u.sessionId === talker && u.update.sessionUpdate === "agent_message_chunk", 10_000, afterGrep);
  await other.cancel(talker);
  assert.equal((await talking).stopReason, "cancelled");

  const longest = arrivals.longestGap(started, ended);
  t.diagnostic(`longest gap between the other session's chunks while the grep ran (${(ended - started).toFixed(0)} ms): ${longest.toFixed(1)} ms`);
  assert.ok(longest < 2000, `the other session's stream stalled for ${longest.toFixed(0)} ms`);

  const message = /^The pattern took longer than 1 s; simplify it/;
  const shown = failed.update.content?.map((c: { content?: { text?: string } }) => c.content?.text).join("") ?? "";
  assert.match(shown, message);
  const toolMessage = model.requests[2]!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "grep-1");
  assert.match(toolMessage.content, message);
});

test("write_file and edit_file replace a hard link to a file outside the workspace; the outside file is unchanged and the mode kept", async (t) => {
  const { agent, model, workdir } = await world(t);
  const outside = mkdtempSync(join(tmpdir(), "rx-outside-"));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(join(outside, "notes.txt"), "outside notes\n");
  chmodSync(join(outside, "notes.txt"), 0o640);
  writeFileSync(join(outside, "tool.sh"), "#!/bin/sh\nx=1\n");
  chmodSync(join(outside, "tool.sh"), 0o750);
  linkSync(join(outside, "notes.txt"), join(workdir, "notes.txt"));
  linkSync(join(outside, "tool.sh"), join(workdir, "tool.sh"));

  model.enqueue(
    { toolCalls: [{ id: "w", name: "write_file", arguments: { path: "notes.txt", content: "workspace notes\n" } }] },
    { toolCalls: [{ id: "e", name: "edit_file", arguments: { path: "tool.sh", edits: [{ oldText: "x=1", newText: "x=2" }] } }] },
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "write and edit")).stopReason, "end_turn");
  const statuses = agent.updatesFor(sessionId).filter((u) => u.status === "completed" || u.status === "failed");
  assert.deepEqual(
    statuses.map((u) => u.status),
    ["completed", "completed"],
  );

  assert.equal(readFileSync(join(outside, "notes.txt"), "utf8"), "outside notes\n");
  assert.equal(readFileSync(join(outside, "tool.sh"), "utf8"), "#!/bin/sh\nx=1\n");
  assert.equal(readFileSync(join(workdir, "notes.txt"), "utf8"), "workspace notes\n");
  assert.equal(readFileSync(join(workdir, "tool.sh"), "utf8"), "#!/bin/sh\nx=2\n");
  for (const [name, mode] of [
    ["notes.txt", 0o640],
    ["tool.sh", 0o750],
  ] as const) {
    assert.equal(statSync(join(workdir, name)).nlink, 1, name);
    assert.equal(statSync(join(outside, name)).nlink, 1, name);
    assert.equal(statSync(join(workdir, name)).mode & 0o7777, mode, name);
  }
});
