/**
 * Turns with no window hold their changes (issue 23, DESIGN §6 `detachedTurns`). Web UIs and SDK
 * providers stop a turn by killing the agent process, never sending session/cancel; the window
 * killed here is that Stop button. The round then streaming finishes, and the turn waits before any
 * write, command or further model request until a window attaches; read-only tools go on.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { agentEnv, BIN, type Agent } from "../support/harness.js";
import type { ScriptedModel } from "../support/scripted-model.js";
import { daemonStatus, world } from "./fixture.js";

const run = promisify(execFile);

const until = async (cond: () => boolean | Promise<boolean>, what: string): Promise<void> => {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
};

const liveOf = async (home: string, sessionId: string): Promise<any> =>
  (await daemonStatus(home)).liveSessions.find((s: { sessionId: string }) => s.sessionId === sessionId);

/**
 * A turn whose first round streams until `release`: its text, then (once released) `calls`. The
 * window is killed mid-stream (or, `polite`, its shim leaves: still no session/cancel), the daemon
 * has seen it go, and then the round is let finish.
 */
async function killMidRound(agent: Agent, model: ScriptedModel, home: string, workdir: string, calls: object[], polite = false) {
  let release!: () => void;
  model.enqueue(
    { content: ["I will write it. ", "Now."], toolCalls: calls as never, holdUntil: new Promise<void>((r) => (release = r)) },
    { content: ["Written."] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.prompt(sessionId, "write out.txt").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  if (polite) await agent.closeStdin();
  else await agent.kill("SIGKILL");
  await until(async () => (await liveOf(home, sessionId))?.attachments === 0, "the daemon to see the window gone");
  release();
  return sessionId;
}

/** session/load through a raw request: the replay before the answer, and where the answer is. */
async function load(agent: Agent, sessionId: string, cwd: string) {
  const from = agent.messages.length;
  const answer = await agent.rawRequest({ id: `load-${sessionId}`, method: "session/load", params: { sessionId, cwd, mcpServers: [] } });
  assert.ok(answer.result, JSON.stringify(answer.error));
  const at = agent.messages.indexOf(answer);
  const replay = agent.messages
    .slice(from, at)
    .filter((m) => m.method === "session/update")
    .map((m) => m.params.update);
  return { replay, at };
}

const text = (updates: any[]): string =>
  updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");

const write = { id: "w1", name: "write_file", arguments: { path: "out.txt", content: "data\n" } };

test("a window killed mid-round: the round finishes, the write and the next request wait; a window that loads sees the held call and the turn goes on", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  const sessionId = await killMidRound(agent, model, home.dir, workdir, [write]);

  await until(async () => (await liveOf(home.dir, sessionId))?.held != null, "the turn to hold");
  // Well past when the write and the next request would have happened with a window attached.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(existsSync(join(workdir, "out.txt")), false, "nothing is written with no window attached");
  assert.equal(model.requests.length, 1, "no further model request with no window attached");

  // The operator's /status, `reasonix sessions`, and the session's own status say it is held.
  const status = await daemonStatus(home.dir);
  assert.equal(status.heldTurns, 1);
  const live = status.liveSessions.find((s: { sessionId: string }) => s.sessionId === sessionId);
  assert.equal(live.running, true);
  assert.equal(live.held.before, 'the tool call "Write out.txt"');
  assert.ok(Date.parse(live.held.until) > Date.parse(live.held.since));
  const { stdout } = await run(process.execPath, [BIN, "sessions", "--cwd", workdir], { env: agentEnv({ home: home.dir }) });
  assert.match(stdout, new RegExp(`${sessionId}\\s+held \\(waiting for a window\\)\\s+0 windows\\s`));
  const probe = spawn();
  await probe.initialize();
  const vendor = await probe.rpc.request("_reasonix.io/session/status", { sessionId });
  assert.equal(vendor.state, "running");
  assert.equal(vendor.phase, "waiting_input");
  assert.equal(vendor.held.reason, "no window attached");
  assert.equal(vendor.held.before, 'the tool call "Write out.txt"');
  assert.equal(model.requests.length, 1, "asking for the status attaches nothing");

  // A window loads: the replay shows the whole turn up to the held call, then the turn goes on live.
  const second = spawn();
  await second.initialize();
  const { replay, at } = await load(second, sessionId, workdir);
  const { messageId, ...first } = replay[0];
  assert.deepEqual(first, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "write out.txt" } });
  assert.match(messageId, /^[0-9a-f-]{36}$/);
  const held = replay.find((u) => u.sessionUpdate === "tool_call");
  assert.equal(held.title, "Write out.txt");
  assert.equal(held.status, "pending");
  assert.match(text(replay), /^I will write it\. Now\.\n\n\[held\] No window is attached, so the turn waits before the tool call "Write out\.txt"\./);
  assert.equal(replay.at(-1)?.sessionUpdate, "available_commands_update", "the turn goes on after the load's reply");
  await second.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "Written.");
  assert.equal(readFileSync(join(workdir, "out.txt"), "utf8"), "data\n");
  assert.equal(model.requests.length, 2);
  const after = second.messages
    .slice(at + 1)
    .filter((m) => m.method === "session/update")
    .map((m) => m.params.update);
  assert.ok(after.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === held.toolCallId && u.status === "completed"));
  await until(async () => (await daemonStatus(home.dir)).runningTurns === 0, "the turn to end");
  assert.equal((await daemonStatus(home.dir)).heldTurns, 0);
});

test("held with no window: a read-only tool of the round still runs, the write after it waits", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  writeFileSync(join(workdir, "in.txt"), "input\n");
  const read = { id: "r1", name: "read_file", arguments: { path: "in.txt" } };
  const sessionId = await killMidRound(agent, model, home.dir, workdir, [read, write]);
  await until(async () => (await liveOf(home.dir, sessionId))?.held != null, "the turn to hold");
  assert.equal(existsSync(join(workdir, "out.txt")), false);

  // What was recorded before any window came back: the read done, the write shown and waiting.
  const second = spawn();
  await second.initialize();
  const { replay } = await load(second, sessionId, workdir);
  const calls = replay.filter((u) => u.sessionUpdate === "tool_call");
  assert.deepEqual(
    calls.map((c) => c.title),
    ["Read in.txt", "Write out.txt"],
  );
  const readDone = replay.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === calls[0].toolCallId && u.status === "completed");
  assert.ok(readDone, "the read ran while nobody was attached");
  assert.equal(replay.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === calls[1].toolCallId).length, 0, "the write had not started");
  await second.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "Written.");
  assert.equal(readFileSync(join(workdir, "out.txt"), "utf8"), "data\n");
  const toolMessages = model.requests[1]!.body.messages.filter((m: { role: string }) => m.role === "tool");
  assert.match(toolMessages[0].content, /input/);
});

test('detachedTurns "continue": the turn runs on with no window, as before', async (t) => {
  const { agent, model, workdir, home } = await world(t, {
    prepare: (dir) => writeFileSync(join(dir, "config.json"), JSON.stringify({ detachedTurns: "continue" })),
  });
  await killMidRound(agent, model, home.dir, workdir, [write]);
  await until(() => existsSync(join(workdir, "out.txt")), "the write with no window");
  await until(async () => (await daemonStatus(home.dir)).runningTurns === 0, "the turn to end");
  assert.equal(model.requests.length, 2);
});

test('detachedTurns "cancel": the turn is cancelled as the last window goes, mid-stream', async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { env: { REASONIX_DETACHED_TURNS: "cancel" } });
  const sessionId = await killMidRound(agent, model, home.dir, workdir, [write]);
  await until(async () => (await daemonStatus(home.dir)).runningTurns === 0, "the turn to end");
  assert.equal(model.aborted, 1, "the stream was stopped, not finished");
  assert.equal(model.requests.length, 1);
  assert.equal(existsSync(join(workdir, "out.txt")), false);
  const probe = spawn();
  await probe.initialize();
  const status = await probe.rpc.request("_reasonix.io/session/status", { sessionId });
  assert.equal(status.turnOutcome.kind, "cancelled");
  assert.equal(status.held, null);
  const { replay } = await load(probe, sessionId, workdir);
  assert.match(text(replay), /\[cancelled\] The last window went away without cancelling \(detachedTurns: cancel\)/);
  assert.equal(replay.filter((u) => u.sessionUpdate === "tool_call").length, 0, "the round's tool calls were never shown");
});

test("a held turn no window claims within permissionTimeoutSeconds ends cancelled; the write never happens", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { env: { REASONIX_PERMISSION_TIMEOUT_SECONDS: "0.5" } });
  // The shim leaves politely this time (its stdin closed): without session/cancel, that is the same.
  const sessionId = await killMidRound(agent, model, home.dir, workdir, [write], true);
  await until(async () => (await daemonStatus(home.dir)).runningTurns === 0, "the held turn to time out");
  assert.equal(existsSync(join(workdir, "out.txt")), false);
  assert.equal(model.requests.length, 1);

  const second = spawn();
  await second.initialize();
  const { replay } = await load(second, sessionId, workdir);
  assert.match(text(replay), /\[cancelled\] No window attached within 0\.5 s: the turn is cancelled before the tool call "Write out\.txt"\./);
  const call = replay.find((u) => u.sessionUpdate === "tool_call");
  const end = replay.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId);
  assert.equal(end.status, "failed");
  assert.equal(end.content[0].content.text, "Not run: no window was attached to let it go on.");
  const status = await second.rpc.request("_reasonix.io/session/status", { sessionId });
  assert.equal(status.turnOutcome.kind, "cancelled");
  assert.equal(existsSync(join(workdir, "out.txt")), false);
  assert.equal(model.requests.length, 1, "loading the cancelled turn runs nothing");
});

test("held: session/cancel from a window that never attached ends the wait at once, cancelled", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  const sessionId = await killMidRound(agent, model, home.dir, workdir, [write]);
  await until(async () => (await liveOf(home.dir, sessionId))?.held != null, "the turn to hold");
  const other = spawn();
  await other.initialize();
  await other.cancel(sessionId);
  await until(async () => (await daemonStatus(home.dir)).runningTurns === 0, "the turn to end");
  assert.equal((await other.rpc.request("_reasonix.io/session/status", { sessionId })).turnOutcome.kind, "cancelled");
  assert.equal(existsSync(join(workdir, "out.txt")), false);
  assert.equal(model.requests.length, 1);
});

test("a subagent's write waits too while no window is attached, and goes on when one loads the session", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  let release!: () => void;
  model.enqueue(
    { toolCalls: [{ id: "task1", name: "task", arguments: { prompt: "write sub.txt", allowEdits: true } }] },
    {
      content: ["child writing"],
      toolCalls: [{ id: "cw", name: "write_file", arguments: { path: "sub.txt", content: "child\n" } }],
      holdUntil: new Promise<void>((r) => (release = r)),
    },
    { content: ["child done"] },
    { content: ["Finished."] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.prompt(sessionId, "delegate it").catch(() => undefined);
  await model.waitForRequests(2);
  await agent.kill("SIGKILL");
  await until(async () => (await liveOf(home.dir, sessionId))?.attachments === 0, "the daemon to see the window gone");
  release();
  await until(async () => (await liveOf(home.dir, sessionId))?.held != null, "the subagent's write to hold");
  assert.equal((await liveOf(home.dir, sessionId)).held.before, 'the tool call "Write sub.txt"');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(existsSync(join(workdir, "sub.txt")), false);
  assert.equal(model.requests.length, 2);

  const second = spawn();
  await second.initialize();
  await load(second, sessionId, workdir);
  await second.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "Finished.");
  assert.equal(readFileSync(join(workdir, "sub.txt"), "utf8"), "child\n");
  assert.equal(model.requests.length, 4);
});
