/**
 * Configuration belongs to a daemon, not to the process it runs in (issue 24): two daemons created
 * in this test process, with different `editorTimeoutSeconds` and `searchTimeoutSeconds`, each apply
 * their own. They were process globals once, and the daemon created last set them for both.
 *
 * The quick daemon is created first and the patient one second, and both run their call at once: a
 * bound shared in either direction fails the test (the quick one would wait 30 s, or the patient
 * one would give up at 1 s).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { daemonGet } from "../support/daemon-http.js";
import { FakeEditor } from "../support/editor.js";
import type { Agent } from "../support/harness.js";
import { world, within, type World } from "./fixture.js";
import { busyBound } from "../support/busy.js";
import { MIN_TOTAL_MS } from "../../daemon/tools/builtin/search-thread.js";

const FS_CAPS = { fs: { readTextFile: true, writeTextFile: true }, terminal: false };
/** How long the patient daemon's call must still be waiting: three times the quick daemon's bound. */
const STILL_WAITING_MS = 3000;

/** The quick daemon (1 s bounds), then the patient one (30 s), each with a session and a window that never answers a write. */
async function twoDaemons(t: Parameters<typeof world>[0]) {
  const daemon = async (seconds: string) => {
    const w = await world(t, {
      clientCapabilities: FS_CAPS,
      env: { REASONIX_EDITOR_TIMEOUT_SECONDS: seconds, REASONIX_SEARCH_TIMEOUT_SECONDS: seconds },
    });
    const editor = new FakeEditor();
    editor.attach(w.agent);
    editor.faults.set("fs/write_text_file", "hang");
    await w.agent.initialize();
    const { sessionId } = await w.agent.newSession(w.workdir);
    return { ...w, editor, sessionId };
  };
  const quick = await daemon("1");
  const patient = await daemon("30");
  assert.notEqual(quick.home.dir, patient.home.dir);
  return { quick, patient };
}

/** The tool call's last update once it finished (completed or failed). */
function finished(agent: Agent, sessionId: string): any {
  return agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"))
    .at(-1);
}

/** The tool result the model read in its last request. */
const lastToolResult = (w: World): string =>
  w.model.requests
    .at(-1)!
    .body.messages.filter((m: { role: string }) => m.role === "tool")
    .at(-1).content;

test("two daemons in one process: each bounds its editor requests by its own editorTimeoutSeconds", async (t) => {
  const { quick, patient } = await twoDaemons(t);
  for (const d of [quick, patient]) {
    d.model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: join(d.workdir, "new.txt"), content: "x\n" } }] }, { content: ["tried"] });
  }
  const quickTurn = quick.agent.prompt(quick.sessionId, "write it");
  const patientTurn = patient.agent.prompt(patient.sessionId, "write it");
  await patient.agent.waitForAgentRequest((r) => r.method === "fs/write_text_file");
  const asked = performance.now();

  assert.equal((await within(15_000, "the quick daemon's turn", quickTurn)).stopReason, "end_turn");
  assert.match(lastToolResult(quick), /the editor did not answer fs\/write_text_file within 1 s/);

  await sleep(Math.max(0, STILL_WAITING_MS - (performance.now() - asked)));
  assert.equal(finished(patient.agent, patient.sessionId), undefined, "the patient daemon's write still waits for its window");
  assert.equal(patient.agent.messages.filter((m: any) => m.method === "$/cancel_request").length, 0, "the patient daemon has not withdrawn its request");
  await patient.agent.cancel(patient.sessionId);
  assert.equal((await patientTurn).stopReason, "cancelled");
  assert.equal(patient.model.requests.length, 1, "the patient daemon's model never read a timeout");
});

test("two daemons in one process: each stops a stuck search at its own searchTimeoutSeconds and counts only its threads", async (t) => {
  const { quick, patient } = await twoDaemons(t);
  for (const d of [quick, patient]) {
    // (a+)+$ against 40 a's and a "b" backtracks about 2^40 ways: it runs until its bound stops it.
    writeFileSync(join(d.workdir, "evil.txt"), `${"a".repeat(40)}b\n`);
    d.model.enqueue({ toolCalls: [{ name: "grep", arguments: { pattern: "(a+)+$" } }] }, { content: ["too slow"] });
  }
  // The stuck pattern is stopped once its nice-10 thread has had half the bound of CPU without moving:
  // on a loaded machine it waits for a CPU first, and beside a CPU-bound suite a nice-10 thread gets
  // a few percent of one (at nice 19 it got 1%, and once did not burn its half second in 61 s) (once past 30 s, the default request bound). Up to the search's own deadline
  // (MIN_TOTAL_MS) that is waiting, not failing: the bound each daemon applied shows in its message.
  const long = { timeoutMs: MIN_TOTAL_MS + 30_000 };
  const quickTurn = quick.agent.prompt(quick.sessionId, "grep it", long);
  const patientTurn = patient.agent.prompt(patient.sessionId, "grep it", long);
  await patient.agent.waitForUpdate((u) => u.update.sessionUpdate === "tool_call");
  const started = performance.now();

  assert.equal((await within(Math.max(busyBound(15_000), MIN_TOTAL_MS), "the quick daemon's turn", quickTurn)).stopReason, "end_turn");
  assert.match(lastToolResult(quick), /^The pattern took longer than 1 s; simplify it/);

  await sleep(Math.max(0, STILL_WAITING_MS - (performance.now() - started)));
  assert.equal(finished(patient.agent, patient.sessionId), undefined, "the patient daemon's grep still runs");
  assert.match(await daemonGet(patient.home.dir, "/metrics"), /^reasonix_search_threads 1$/m);
  assert.match(await daemonGet(quick.home.dir, "/metrics"), /^reasonix_search_threads 0$/m, "the other daemon's thread is not this one's");
  await patient.agent.cancel(patient.sessionId);
  assert.equal((await patientTurn).stopReason, "cancelled");
  assert.equal(patient.model.requests.length, 1, "the patient daemon's model never read a stall");
});
