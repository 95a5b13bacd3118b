import assert from "node:assert/strict";
import { spawn as spawnProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, stopDaemon as stopDaemonOf, waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import type { Agent, AgentProcess } from "../support/harness.js";
import { daemonStatus, world, within, test, processTest } from "./fixture.js";
import { busyBound } from "../support/busy.js";

/** Loads a session through a raw request and splits what arrived: replay before the answer, the rest after. */
async function load(agent: Agent, sessionId: string, cwd: string) {
  const fromMsg = agent.messages.length;
  const answer = await agent.rawRequest({ id: `load-${sessionId}`, method: "session/load", params: { sessionId, cwd, mcpServers: [] } });
  assert.ok(answer.result, JSON.stringify(answer.error));
  const at = agent.messages.indexOf(answer);
  const replay = agent.messages
    .slice(fromMsg, at)
    .filter((m) => m.method === "session/update")
    .map((m) => m.params.update);
  return { answer, replay, at };
}

/**
 * Streamed updates reach the store in batches; a window's session/load flushes the batch before it
 * replays, so once another window's replay shows `seen`, it is on disk.
 */
async function flushedBy(spawn: () => AgentProcess, sessionId: string, cwd: string, seen: string): Promise<void> {
  const probe = spawn();
  await probe.initialize();
  const { replay } = await load(probe, sessionId, cwd);
  assert.ok(JSON.stringify(replay).includes(seen), `the store holds "${seen}" before the kill`);
  await probe.closeStdin();
}

const withoutCommands = (us: Array<{ sessionUpdate: string }>) => us.filter((u) => u.sessionUpdate !== "available_commands_update");

test("after the editor closes, session/load replays the same updates in the same order before answering", async (t) => {
  const { agent, model, workdir, spawn } = await world(t);
  model.enqueue(
    { reasoning: ["planning"], toolCalls: [{ name: "todo_write", arguments: { todos: [{ content: "write", status: "in_progress" }] } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: "out.txt", content: "data\n" } }] },
    { content: ["All ", "done."] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "do the work");
  const live = withoutCommands(agent.updatesFor(sessionId));
  assert.equal(await agent.closeStdin(), 0);

  const second = spawn();
  await second.initialize();
  const { replay, at } = await load(second, sessionId, workdir);
  assert.deepEqual(replay[0], { sessionUpdate: "user_message_chunk", content: { type: "text", text: "do the work" }, messageId: replay[0].messageId });
  // The replay, then the slash menu as the last update before the answer (acp-tck ACP-LOAD-002).
  assert.equal(replay.at(-1)?.sessionUpdate, "available_commands_update");
  assert.deepEqual(replay.slice(1, -1), live);
  assert.ok(replay.some((u) => u.sessionUpdate === "tool_call") && replay.some((u) => u.sessionUpdate === "plan"));
  // Nothing of the loaded session follows the answer until something new happens.
  await second.rpc.request("session/list", {});
  assert.deepEqual(
    second.messages.slice(at + 1).filter((m) => m.method === "session/update"),
    [],
  );
  assert.equal(model.requests.length, 3, "load never re-runs the model");
  assert.equal(readFileSync(join(workdir, "out.txt"), "utf8"), "data\n");
});

test("SIGKILL of the shim mid-stream: the turn completes in the daemon and a new shim's load shows the whole answer", async (t) => {
  const { agent, model, workdir, spawn, home } = await world(t);
  const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
  model.enqueue({ content: words, chunkDelayMs: 50 });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.prompt(sessionId, "stream").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  await agent.kill("SIGKILL");
  const seen = agent.textOf(sessionId);
  assert.ok(!seen.includes("word39"));
  await model.waitForRequests(1);

  // The turn goes on in the daemon with nobody attached; wait for it to end there.
  const status = () => daemonStatus(home.dir);
  assert.equal((await status()).runningTurns, 1, "still streaming after the window died");
  for (let i = 0; i < 100 && (await status()).runningTurns > 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await status()).runningTurns, 0);
  const second = spawn();
  await second.initialize();
  const { replay } = await load(second, sessionId, workdir);
  const text = replay
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
  assert.equal(text, words.join(""));
});

test("two windows on one session both see every update; the other window sees the prompt; either can cancel", async (t) => {
  const { agent: a, model, workdir, window } = await world(t);
  await a.initialize();
  const { sessionId } = await a.newSession(workdir);
  const b = await window(sessionId);

  model.enqueue({ content: ["from ", "A's turn"] });
  await a.prompt(sessionId, "prompt from A");
  await b.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "A's turn");
  const bUpdates = withoutCommands(b.updatesFor(sessionId));
  assert.deepEqual(bUpdates[0], {
    sessionUpdate: "user_message_chunk",
    content: { type: "text", text: "prompt from A" },
    messageId: (bUpdates[0] as { messageId?: string }).messageId,
  });
  assert.deepEqual(bUpdates.slice(1), withoutCommands(a.updatesFor(sessionId)));

  const aFrom = a.updates.length;
  model.enqueue({ content: ["B's answer"] });
  await b.prompt(sessionId, "prompt from B");
  await a.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "B's answer", undefined, aFrom);
  const fromB = a.updatesFor(sessionId, aFrom)[0];
  assert.deepEqual(fromB, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "prompt from B" }, messageId: fromB.messageId });

  model.enqueue({ content: ["slow "], hang: true });
  const pending = a.prompt(sessionId, "long one");
  await b.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "slow ");
  await b.cancel(sessionId);
  assert.equal((await pending).stopReason, "cancelled");
});

test("a permission question whose window is killed is asked again on the other window, and on the next to attach", async (t) => {
  const { agent: a, model, workdir, spawn, window, home } = await world(t);
  await a.initialize();
  const { sessionId } = await a.newSession(workdir);
  const b = await window(sessionId);
  a.onPermission = () => new Promise(() => undefined); // A never answers
  b.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options.find((o: { kind: string }) => o.kind === "allow_once").optionId } });
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo asked-again > again.txt" } }] }, { content: ["finished"] });
  a.prompt(sessionId, "run").catch(() => undefined);
  await a.waitForAgentRequest((r) => r.method === "session/request_permission");
  assert.equal(b.agentRequests.length, 0, "only one window is asked at a time");
  await a.kill("SIGKILL");
  await b.waitForAgentRequest((r) => r.method === "session/request_permission");
  await b.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "finished");
  assert.equal(readFileSync(join(workdir, "again.txt"), "utf8"), "asked-again\n");

  // Now with nobody attached: the question waits for the next window.
  const c = await window(sessionId);
  c.onPermission = () => new Promise(() => undefined);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo later > later.txt" } }] }, { content: ["later done"] });
  c.prompt(sessionId, "run later").catch(() => undefined);
  await c.waitForAgentRequest((r) => r.method === "session/request_permission");
  await b.kill("SIGKILL");
  await c.kill("SIGKILL");
  const status = await daemonStatus(home.dir);
  assert.equal(status.pendingPermissions, 1);
  const d = spawn();
  d.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options.find((o: { kind: string }) => o.kind === "allow_once").optionId } });
  await d.initialize();
  await d.rpc.request("session/resume", { sessionId, cwd: workdir, mcpServers: [] });
  await d.waitForAgentRequest((r) => r.method === "session/request_permission");
  await d.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "later done");
  assert.equal(readFileSync(join(workdir, "later.txt"), "utf8"), "later\n");
});

// Process connector only: a real shim stops reading its stdout, and the daemon process's RSS is measured.
processTest("a window that stops reading does not hold up the other; the daemon drops it and its memory stays bounded", async (t) => {
  // The backlog limit is lowered so a modest flood shows the mechanism; the default is 64 MiB.
  const {
    agent: a,
    model,
    workdir,
    home,
  } = await world(t, {
    connector: "process",
    prepare: (dir: string) => writeFileSync(join(dir, "config.json"), JSON.stringify({ windowBacklogBytes: 5 * 1024 * 1024 })),
    // 8 MiB through a real shim: on a loaded machine (two suites side by side) past the 30 s default.
    requestTimeoutMs: busyBound(60_000),
  });
  await a.initialize();
  const { sessionId } = await a.newSession(workdir);
  // The stuck window: a real shim whose stdout nobody reads.
  const stuck = spawnProcess(process.execPath, [BIN, "acp"], { env: { ...process.env, REASONIX_HOME: home.dir }, stdio: ["pipe", "pipe", "ignore"] });
  const stuckExit = new Promise<number | null>((r) => stuck.once("exit", (code) => r(code)));
  t.after(() => stuck.kill("SIGKILL"));
  stuck.stdout!.pause();
  stuck.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } })}\n`);
  stuck.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/resume", params: { sessionId, cwd: workdir, mcpServers: [] } })}\n`);
  const daemon = await waitForDaemonPid(home.dir);
  // The flood starts once the stuck window is attached to the session, as /status counts it.
  const attached = async () => (await daemonStatus(home.dir)).liveSessions.find((s: { sessionId: string }) => s.sessionId === sessionId)?.attachments;
  const deadline = Date.now() + 10_000;
  while ((await attached()) !== 2) {
    assert.ok(Date.now() < deadline, "the stuck window attached within 10 s");
    await new Promise((r) => setTimeout(r, 50));
  }

  const chunk = "x".repeat(4 * 1024);
  // ~8 MiB to each window at a fast model's pace (2 MB/s), past the 5 MiB a window may fall behind:
  // just under 4 MiB of reasoning and as much answer, the most one round may bring of each.
  const n = 1000;
  const pieces = Array.from({ length: n }, (_, i) => `${i}:${chunk}\n`);
  model.enqueue({ reasoning: pieces, content: pieces, chunkDelayMs: 2 });
  const result = await within(busyBound(60_000), "fast window's prompt", a.prompt(sessionId, "flood"));
  assert.equal(result.stopReason, "end_turn");
  const chunks = a.updatesFor(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk");
  assert.equal(chunks.length, n);
  const log = readFileSync(join(home.dir, "logs", "daemon.log"), "utf8");
  assert.match(log, /fell too far behind/);
  // The dropped window learns it: its shim exits non-zero once it reads again.
  stuck.stdout!.resume();
  assert.notEqual(await within(10_000, "stuck shim exit", stuckExit), 0);
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${daemon}/status`, "utf8"))![1]);
  assert.ok(rssKb < 300 * 1024, `daemon RSS ${rssKb} kB`);
});

// Process connector only: it kills the daemon's process.
processTest("kill -9 of the daemon mid-turn: a new shim starts a new daemon; load replays what was persisted and marks the turn interrupted", async (t) => {
  const { agent, model, workdir, spawn, home } = await world(t, { connector: "process" });
  model.enqueue({ content: ["before ", "the crash "], hang: true });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.prompt(sessionId, "acknowledged prompt").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "the crash ");
  await flushedBy(spawn, sessionId, workdir, "the crash ");
  const old = await waitForDaemonPid(home.dir);
  process.kill(old, "SIGKILL");
  await waitForPidExit(old, 5000);
  // The editor closes the window that lost its daemon, so no shim is left waiting to rejoin the next.
  await agent.closeStdin();

  const next = spawn();
  await next.initialize();
  const fresh = await waitForDaemonPid(home.dir);
  assert.notEqual(fresh, old);
  const { replay } = await load(next, sessionId, workdir);
  assert.deepEqual(replay[0], { sessionUpdate: "user_message_chunk", content: { type: "text", text: "acknowledged prompt" }, messageId: replay[0].messageId });
  const text = replay
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
  assert.match(text, /^before the crash /);
  assert.match(text, /\[interrupted\]/);
  assert.equal(model.requests.length, 1, "nothing was re-run");

  model.enqueue({ content: ["resumed"] });
  assert.equal((await next.prompt(sessionId, "continue")).stopReason, "end_turn");
  const messages = model.requests[1]!.body.messages;
  assert.ok(messages.some((m: { role: string; content: string }) => m.role === "user" && m.content === "acknowledged prompt"));
  assert.equal(existsSync(join(home.dir, "run", "daemon.sock")), true);
});

// Process connector only: it kills the daemon's process.
processTest("a daemon killed during a tool call leaves a well-formed history: the call is closed as interrupted", async (t) => {
  const { agent, model, workdir, spawn, home } = await world(t, { connector: "process" });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  // Long enough to be running still when the daemon dies, however slowly a loaded machine gets there
  // (3 s once was not, beside a second suite); the kill ends the wait.
  model.enqueue({ toolCalls: [{ id: "slow", name: "run_command", arguments: { command: "sleep 30" } }] });
  agent.prompt(sessionId, "sleep").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "tool_call_update" && u.update.status === "in_progress");
  await flushedBy(spawn, sessionId, workdir, "in_progress");
  process.kill(await waitForDaemonPid(home.dir), "SIGKILL");
  // The editor closes the window that lost its daemon, so no shim is left waiting to rejoin the next.
  await agent.closeStdin();

  const next = spawn();
  await next.initialize();
  await load(next, sessionId, workdir);
  model.enqueue({ content: ["ok"] });
  await next.prompt(sessionId, "what happened?");
  const messages = model.requests.at(-1)!.body.messages;
  const toolAnswer = messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "slow");
  assert.match(toolAnswer.content, /Interrupted/);
});

test("session/list filters by cwd and pages with a cursor; session/delete removes a session from list and load", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const other = `${workdir}/sub`;
  const mine: string[] = [];
  for (let i = 0; i < 55; i++) mine.push((await agent.newSession(workdir)).sessionId);
  const theirs = (await agent.newSession(other)).sessionId;

  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await agent.rpc.request("session/list", { cwd: workdir, ...(cursor ? { cursor } : {}) });
    for (const s of page.sessions) {
      assert.equal(s.cwd, workdir);
      assert.ok(typeof s.updatedAt === "string");
      seen.push(s.sessionId);
    }
    cursor = page.nextCursor ?? undefined;
    pages++;
  } while (cursor);
  assert.ok(pages >= 2);
  assert.deepEqual([...seen].sort(), [...mine].sort());
  assert.ok(!seen.includes(theirs));
  const bad = await agent.rawRequest({ id: "badcursor", method: "session/list", params: { cursor: "%%%" } });
  assert.equal(bad.error.code, -32602);

  await agent.rpc.request("session/delete", { sessionId: mine[0] });
  await agent.rpc.request("session/delete", { sessionId: mine[0] });
  const all = await agent.rpc.request("session/list", { cwd: workdir });
  assert.ok(!all.sessions.some((s: { sessionId: string }) => s.sessionId === mine[0]));
  const gone = await agent.rawRequest({ id: "gone", method: "session/load", params: { sessionId: mine[0], cwd: workdir, mcpServers: [] } });
  assert.equal(gone.error.code, -32002);
});

test("a prompt sent during a running turn waits and runs next; titles come from the first prompt", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["one ", "two ", "three"], chunkDelayMs: 50 }, { content: ["second answer"] });
  const first = agent.prompt(sessionId, "Refactor the parser\nwith details");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  const second = agent.prompt(sessionId, "then this");
  assert.equal((await first).stopReason, "end_turn");
  assert.equal((await second).stopReason, "end_turn");
  const texts = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text);
  assert.deepEqual(texts, ["one ", "two ", "three", "second answer"]);
  assert.equal(model.requests[1]!.body.messages.at(-1).content, "then this");
  const info = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "session_info_update");
  assert.equal(info.title, "Refactor the parser");
  const list = await agent.rpc.request("session/list", {});
  assert.equal(list.sessions.find((s: { sessionId: string }) => s.sessionId === sessionId).title, "Refactor the parser");
});

test("session/close detaches the caller; the session stops (turn cancelled, history kept) when the last window closes", async (t) => {
  const { agent: a, model, workdir, spawn, window, home } = await world(t);
  await a.initialize();
  const { sessionId } = await a.newSession(workdir);
  const b = await window(sessionId);
  model.enqueue({ content: ["working "], hang: true });
  const pending = a.prompt(sessionId, "long task");
  await b.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  await a.rpc.request("session/close", { sessionId });
  const status = () => daemonStatus(home.dir);
  assert.equal((await status()).runningTurns, 1, "the other window keeps the turn alive");
  await b.rpc.request("session/close", { sessionId });
  assert.equal((await pending).stopReason, "cancelled");
  assert.equal((await status()).runningTurns, 0);
  assert.equal((await status()).sessions.live, 0);
  const c = spawn();
  await c.initialize();
  const { replay } = await load(c, sessionId, workdir);
  assert.ok(replay.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "working "));
});

test("a question asked while nobody is attached waits, shows in /status, then counts as rejected at the timeout", async (t) => {
  // About the question alone: the turn may go on to its next request with no window (detached-turns.test.ts has the hold).
  const { agent, model, workdir, home, spawn } = await world(t, {
    env: { REASONIX_PERMISSION_TIMEOUT_SECONDS: "2" },
    prepare: (dir: string) => writeFileSync(join(dir, "config.json"), JSON.stringify({ detachedTurns: "continue" })),
  });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = () => new Promise(() => undefined);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "touch nobody.marker" } }] }, { content: ["understood, not run"] });
  agent.prompt(sessionId, "run it").catch(() => undefined);
  await agent.waitForAgentRequest((r) => r.method === "session/request_permission");
  await agent.kill("SIGKILL");
  const status = () => daemonStatus(home.dir);
  const waiting = await status();
  assert.equal(waiting.pendingPermissions, 1);
  assert.equal(waiting.liveSessions[0].pendingPermissions[0].askedOn === undefined, false);
  await model.waitForRequests(2, 10_000);
  assert.match(model.requests[1]!.body.messages.at(-1).content, /No answer to the permission request/);
  assert.equal(existsSync(join(workdir, "nobody.marker")), false);
  assert.equal((await status()).pendingPermissions, 0);
  const next = spawn();
  await next.initialize();
  const { replay } = await load(next, sessionId, workdir);
  assert.ok(replay.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "understood, not run"));
});

test("after a restart, sessions nobody prompted are left out of session/list, and still load by id", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const empty = (await agent.newSession(workdir)).sessionId;
  const used = (await agent.newSession(workdir)).sessionId;
  await agent.prompt(used, "something worth keeping");
  await agent.closeStdin();
  await stopDaemonOf(home.dir);
  const next = spawn();
  await next.initialize();
  const ids = (await next.rpc.request("session/list", { cwd: workdir })).sessions.map((s: { sessionId: string }) => s.sessionId);
  assert.deepEqual(ids, [used]);
  assert.ok((await next.rpc.request("session/load", { sessionId: empty, cwd: workdir, mcpServers: [] })).modes);
});

test("an idle session with no window leaves memory after sessionUnloadSeconds (status shows it) and loads again with its whole history", async (t) => {
  const { agent, model, workdir, spawn, home } = await world(t, {
    prepare: (dir: string) => writeFileSync(join(dir, "config.json"), JSON.stringify({ sessionUnloadSeconds: 1 })),
  });
  model.enqueue({ content: ["kept ", "answer"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "remember this");
  const live = withoutCommands(agent.updatesFor(sessionId));
  // The window goes away without session/close: the session stays live, then idles out.
  assert.equal(await agent.closeStdin(), 0);
  const deadline = Date.now() + 15_000;
  let status = await daemonStatus(home.dir);
  while (status.sessions.live > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    status = await daemonStatus(home.dir);
  }
  assert.equal(status.sessions.live, 0);
  assert.equal(status.sessions.unloadedIdle, 1);
  const next = spawn();
  await next.initialize();
  const { replay } = await load(next, sessionId, workdir);
  assert.deepEqual(withoutCommands(replay), [
    { sessionUpdate: "user_message_chunk", content: { type: "text", text: "remember this" }, messageId: replay[0].messageId },
    ...live,
  ]);
});

test("a window that prompts a stored session before its resume is through (a shim rejoining) runs with that window's environment", async (t) => {
  const { agent, model, workdir, spawn, home } = await world(t, {
    prepare: (dir: string) => writeFileSync(join(dir, "config.json"), JSON.stringify({ sessionUnloadSeconds: 1 })),
  });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal(await agent.closeStdin(), 0);
  const deadline = Date.now() + 15_000;
  while ((await daemonStatus(home.dir)).sessions.live > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await daemonStatus(home.dir)).sessions.live, 0);
  // The session comes back from the store with no window's environment; the prompt is the first
  // this window says of it (a rejoining shim sends its resume and the editor's prompt back to back).
  const next = spawn();
  await next.initialize();
  model.enqueue({ content: ["back"] });
  assert.equal((await next.prompt(sessionId, "straight in")).stopReason, "end_turn");
  assert.equal(model.requests.length, 1);
});
