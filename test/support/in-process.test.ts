/**
 * The in-process connector itself: the daemon it creates sees only the environment of the window
 * that started it (never the test runner's), each window sends its own, and a stop closes the daemon
 * the way `reasonix daemon stop` would, so the next window starts a fresh one on the same store.
 * Its windows are the shim's own code, so they leave, fail and rejoin as a shim process does.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stopDaemon } from "./harness.js";
import { daemonStatusCommand, world } from "../e2e/fixture.js";

test("the test runner's environment never reaches an in-process daemon: no config override, no provider key", async (t) => {
  // Values the runner would leak if the daemon read process.env: a config error, and a key.
  const saved = { steps: process.env.REASONIX_MAX_STEPS, key: process.env.DEEPSEEK_API_KEY };
  process.env.REASONIX_MAX_STEPS = "abc";
  process.env.DEEPSEEK_API_KEY = "sk-runner-leak";
  t.after(() => {
    for (const [name, value] of [
      ["REASONIX_MAX_STEPS", saved.steps],
      ["DEEPSEEK_API_KEY", saved.key],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  const { agent, workdir } = await world(t, { noModel: true });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await assert.rejects(agent.prompt(sessionId, "hi"), (e: { code: number; message: string }) => e.code === -32000 && /DEEPSEEK_API_KEY/.test(e.message));
});

test("a window's env option is the daemon's environment when it starts it, and every window's own for its sessions", async (t) => {
  const { agent, model, workdir, spawn } = await world(t, { env: { REASONIX_MAX_STEPS: "2", ONLY_IN: "first" } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.respond = () => ({ toolCalls: [{ name: "list_directory", arguments: {} }] });
  assert.equal((await agent.prompt(sessionId, "loop")).stopReason, "max_turn_requests");
  assert.equal(model.requests.length, 2, "REASONIX_MAX_STEPS reached the daemon's config");

  const other = spawn({ env: { ONLY_IN: "second" } });
  await other.initialize();
  const { sessionId: second } = await other.newSession(workdir);
  model.respond = undefined;
  model.enqueue({ toolCalls: [{ id: "e", name: "run_command", arguments: { command: "echo $ONLY_IN" } }] }, { content: ["ok"] });
  other.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options[0].optionId } });
  await other.prompt(second, "which window?");
  const tool = model.requests.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === "e");
  assert.match(String(tool.content), /second/);
});

test("stopDaemon closes the in-process daemon like `reasonix daemon stop`; the next window starts another on the same store", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "keep me");
  assert.equal((await daemonStatusCommand(home.dir)).pid, process.pid, "`reasonix daemon status` reaches the daemon in this process");
  const info = join(home.dir, "run", "daemon.json");
  const first = JSON.parse(readFileSync(info, "utf8")).startedAt;
  assert.equal(await agent.closeStdin(), 0);
  await stopDaemon(home.dir);
  assert.equal(existsSync(join(home.dir, "run", "daemon.sock")), false);
  assert.equal(existsSync(join(home.dir, "run", "daemon.json")), false);

  const next = spawn();
  await next.initialize();
  const loaded = await next.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  assert.ok(loaded.configOptions);
  assert.notEqual(JSON.parse(readFileSync(info, "utf8")).startedAt, first, "a new daemon wrote daemon.json");
});

// What the in-process window has because it is the shim's own code (shim/acp.ts), not a copy.

test("a window whose client stops reading its stdout has left: exit 0 without a word, the turn finishes in the daemon", async (t) => {
  const { agent, model, workdir, spawn } = await world(t);
  const pieces = Array.from({ length: 20 }, (_, i) => `piece${i} `);
  model.enqueue({ content: pieces, chunkDelayMs: 10 });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  void agent.prompt(sessionId, "stream for a while").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "piece2 ");
  agent.closeStdout();
  assert.deepEqual(await agent.exited, { code: 0, signal: null });
  assert.equal(agent.stderr(), "");
  const other = spawn();
  await other.initialize();
  await other.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  await other.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "piece19 ");
});

test("a window whose daemon stopped answers its pending request, then rejoins the next daemon as the same window", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  model.enqueue({ content: ["partial "], hang: true }, { content: ["after the restart"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const pending = agent.prompt(sessionId, "interrupted").then(
    () => undefined,
    (e: { code: number; data?: { reason?: string } }) => e,
  );
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  await stopDaemon(home.dir);
  const lost = await pending;
  assert.equal(lost?.code, -32001);
  assert.equal(lost?.data?.reason, "daemon_lost");
  // Another window starts the next daemon, as a supervisor would; the first rejoins it within 3 s.
  await spawn().initialize();
  const deadline = Date.now() + 5000;
  while (!/reconnected to the daemon/.test(agent.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.match(agent.stderr(), /reconnected to the daemon/);
  assert.equal((await agent.prompt(sessionId, "and now?")).stopReason, "end_turn");
  assert.equal(agent.textOf(sessionId).endsWith("after the restart"), true);
});
