import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn as spawnProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Level } from "level";
import WebSocket from "ws";
import { RECONNECT_WINDOW_MS } from "../../shim/rejoin.js";
import { DAEMON_NODE_FLAGS, START_BUDGET_MS } from "../../shim/connect.js";
import { UnixWebSocket } from "../../shim/ws-client.js";
import { BIN, isAlive, makeHome, waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import { world, within, processTest } from "./fixture.js";

const run = promisify(execFile);

/** Every `reasonix daemon run` process whose REASONIX_HOME is `home`. */
function daemonsOf(home: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (!cmd.includes("daemon") || !cmd.includes("run")) continue;
      const env = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (env.includes(`REASONIX_HOME=${home}`) && isAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

processTest("two shims started at the same instant on a fresh home both initialize, and one daemon runs", async (t) => {
  const { agent, spawn, home } = await world(t, { connector: "process" });
  const second = spawn();
  const [a, b] = await Promise.all([agent.initialize(), second.initialize()]);
  assert.equal(a.protocolVersion, 1);
  assert.equal(b.protocolVersion, 1);
  const pid = await waitForDaemonPid(home.dir);
  // The loser of the lock race exits on its own, soon after saying "already running".
  const deadline = Date.now() + 5000;
  while (daemonsOf(home.dir).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(daemonsOf(home.dir), [pid]);
  // Started with the daemon's own Node flags, before the bin script.
  const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  assert.deepEqual(cmd.slice(1, 1 + DAEMON_NODE_FLAGS.length), DAEMON_NODE_FLAGS);
});

processTest("closing stdin ends the shim (exit 0), not the daemon; `reasonix daemon stop` stops it cleanly", async (t) => {
  const { agent, home, workdir } = await world(t, { connector: "process" });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.ok(sessionId);
  const pid = await waitForDaemonPid(home.dir);
  assert.equal(await agent.closeStdin(), 0);
  assert.equal(isAlive(pid), true);

  const status = await run(process.execPath, [BIN, "daemon", "status"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  const parsed = JSON.parse(status.stdout);
  assert.equal(parsed.pid, pid);
  assert.equal(parsed.sessions.stored, 1);
  assert.ok(!status.stdout.includes("sk-"));

  const stop = await run(process.execPath, [BIN, "daemon", "stop"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  assert.match(stop.stdout, /stopped/);
  assert.equal(await waitForPidExit(pid, 5000), true);
  assert.equal(existsSync(join(home.dir, "run", "daemon.sock")), false);
  assert.equal(existsSync(join(home.dir, "run", "daemon.json")), false);
  // The lock is released: the store opens in this process.
  const db = new Level(join(home.dir, "db"));
  await db.open();
  await db.close();
});

processTest("kill -9 of the daemon during a prompt: the pending prompt gets an error naming the log, the shim exits non-zero", async (t) => {
  const { agent, model, home, workdir } = await world(t, { connector: "process" });
  model.enqueue({ content: ["partial "], hang: true });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const pending = agent.prompt(sessionId, "never finishes");
  pending.catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  const pid = await waitForDaemonPid(home.dir);
  process.kill(pid, "SIGKILL");
  const err = await within(
    5000,
    "error for the pending prompt",
    pending.then(
      () => undefined,
      (e: unknown) => e as { code: number; message: string; data?: { logPath?: string } },
    ),
  );
  assert.ok(err, "the prompt must fail, not succeed");
  assert.equal(err.code, -32001);
  assert.match(err.message, /daemon\.log/);
  assert.equal(err.data?.logPath, join(home.dir, "logs", "daemon.log"));
  // A request sent while the shim waits for a daemon to come back is answered before it exits.
  const late = await agent.newSession(workdir).then(
    () => undefined,
    (e: { code: number }) => e,
  );
  assert.equal(late?.code, -32001);
  const exit = await within(5000, "shim exit", agent.exited);
  assert.notEqual(exit.code, 0);
  assert.match(agent.stderr(), /daemon connection was lost/);
});

test("the socket refuses another wire version and browser origins before any ACP byte", async (t) => {
  const { agent, home } = await world(t);
  await agent.initialize();
  const socketPath = join(home.dir, "run", "daemon.sock");
  const attempt = (headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws+unix:${socketPath}:/acp`, { headers });
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => reject(new Error("upgrade accepted")));
      ws.on("error", () => undefined);
    });
  assert.equal(await attempt({ "x-reasonix-wire": "999" }), 426);
  assert.equal(await attempt({ "x-reasonix-wire": "1", origin: "https://evil.example" }), 403);
});

processTest("after an upgrade, a shim of the new build replaces an idle daemon; a busy one stays, with a warning", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { connector: "process", env: { REASONIX_BUILD_ID: "0.1.0+old" } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const old = await waitForDaemonPid(home.dir);
  // Busy: a turn is running, so the new build's shim uses the old daemon and says so.
  model.enqueue({ content: ["working "], hang: true });
  const pending = agent.prompt(sessionId, "long");
  pending.catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  const busy = spawn({ env: { REASONIX_BUILD_ID: "0.1.0+new" } });
  await busy.initialize();
  assert.equal(await waitForDaemonPid(home.dir), old);
  assert.match(busy.stderr(), /build 0\.1\.0\+old .* is busy/);
  await busy.closeStdin();
  await agent.cancel(sessionId);
  await pending;
  await agent.closeStdin();

  // Idle, nobody attached: the next new-build shim drains it and starts its own.
  const fresh = spawn({ env: { REASONIX_BUILD_ID: "0.1.0+new" } });
  await fresh.initialize();
  assert.equal(await waitForPidExit(old, 5000), true);
  const info = JSON.parse(readFileSync(join(home.dir, "run", "daemon.json"), "utf8"));
  assert.notEqual(info.pid, old);
  assert.equal(info.build, "0.1.0+new");
  // The session survived the handover.
  const loaded = await fresh.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  assert.ok(loaded.configOptions);
});

processTest("a daemon that comes back within seconds (a supervisor restarted it): the shim rejoins as the same window", async (t) => {
  const { agent, model, home, workdir } = await world(t, { connector: "process", clientCapabilities: { terminal: true } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["partial "], hang: true });
  const pending = agent.prompt(sessionId, "interrupted prompt");
  const failed = pending.then(
    () => undefined,
    (e: { code: number }) => e,
  );
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  const old = await waitForDaemonPid(home.dir);
  process.kill(old, "SIGKILL");
  await waitForPidExit(old, 5000);
  // What systemd's Restart=on-failure would do.
  await run(process.execPath, [BIN, "daemon", "start"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  assert.equal((await failed)?.code, -32001, "the prompt in flight failed; it is never re-sent");
  // Whenever the restart completes: a shim that gave up fails this at once, with its stderr.
  await agent.waitForStderr(/reconnected to the daemon/);
  assert.equal(agent.exitStatus, undefined, "the shim is still running");

  // The same window goes on: the session is attached again, with the editor's capabilities.
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo rejoined" } }] }, { content: ["done"] });
  agent.onClientRequest = async (method) => {
    if (method === "terminal/create") return { terminalId: "t1" };
    if (method === "terminal/wait_for_exit") return { exitCode: 0 };
    if (method === "terminal/output") return { output: "rejoined\n", truncated: false, exitStatus: { exitCode: 0 } };
    return {};
  };
  agent.onPermission = (p) => ({ outcome: { outcome: "selected", optionId: p.options[0].optionId } });
  assert.equal((await agent.prompt(sessionId, "after the restart")).stopReason, "end_turn");
  assert.ok(
    agent.agentRequests.some((r) => r.method === "terminal/create"),
    "the replayed initialize restored the terminal capability",
  );
  const requests = model.requests.map((r) => r.body.messages.at(-1));
  assert.equal(requests.filter((m: { content?: string }) => m.content === "interrupted prompt").length, 1, "the lost prompt was not re-sent");
});

processTest("a restarted daemon still starting when the shim's window ends (a busy machine): the shim sees it start, waits and rejoins", async (t) => {
  const { agent, model, home, workdir } = await world(t, { connector: "process" });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const old = await waitForDaemonPid(home.dir);
  process.kill(old, "SIGKILL");
  await waitForPidExit(old, 5000);
  // What a supervisor does, on a machine too busy to start a daemon within the window: the process
  // runs at once, but answers only after the window, counted from the loss, has ended.
  const slow = join(home.dir, "slow-start.cjs");
  writeFileSync(slow, `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${RECONNECT_WINDOW_MS + 500});\n`);
  const env = { ...process.env, REASONIX_HOME: home.dir, NODE_OPTIONS: `--require ${slow}` };
  spawnProcess(process.execPath, [BIN, "daemon", "run"], { env, detached: true, stdio: "ignore" }).unref();
  await agent.waitForStderr(/reconnected to the daemon/, RECONNECT_WINDOW_MS + START_BUDGET_MS);
  assert.notEqual(await waitForDaemonPid(home.dir), old);
  model.enqueue({ content: ["back"] });
  assert.equal((await agent.prompt(sessionId, "after a slow restart")).stopReason, "end_turn");
});

processTest("a request piped in with EOF right behind it is still answered, cold and warm, then the shim exits 0", async (t) => {
  const home = await makeHome();
  t.after(() => home.cleanup());
  const init = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } })}\n`;
  for (const round of ["cold", "warm"]) {
    const out = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = execFile(process.execPath, [BIN, "acp"], { env: { ...process.env, REASONIX_HOME: home.dir } }, (err, stdout) => {
        if (err && typeof (err as { code?: unknown }).code !== "number") reject(err);
        else resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout });
      });
      child.stdin!.end(init);
    });
    assert.equal(out.code, 0, round);
    const lines = out.stdout.trim().split("\n");
    assert.equal(lines.length, 1, round);
    assert.equal(JSON.parse(lines[0]!).result.protocolVersion, 1, round);
  }
});

processTest("a client that closes the shim's stdout mid-stream has left: the shim exits 0 without a word, the turn finishes in the daemon", async (t) => {
  const w = await world(t, { connector: "process" });
  const { agent, model, workdir } = w;
  const pieces = Array.from({ length: 40 }, (_, i) => `piece${i} `);
  model.enqueue({ content: pieces, chunkDelayMs: 20 }, { content: ["next answer"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  void agent.prompt(sessionId, "stream for a while").catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "piece2 ");
  agent.closeStdout();
  assert.deepEqual(await within(10_000, "the shim's exit", agent.exited), { code: 0, signal: null });
  assert.equal(agent.stderr(), "", "no stack trace, no word: the client left");

  // The turn ran on: another window sees all of it, and the model's next request holds the whole answer.
  const other = w.spawn();
  await other.initialize();
  await other.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  await other.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "piece39 ");
  assert.equal((await other.prompt(sessionId, "and then?")).stopReason, "end_turn");
  const assistant = model.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "assistant");
  assert.equal(assistant.at(-1).content, pieces.join(""));
});

test("messages that come with the upgrade request are the window's first: an initialize and a session/new sent before the 101 are answered in order", async (t) => {
  const { agent, home, workdir } = await world(t);
  await agent.initialize();
  const lines = [
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }),
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: workdir, mcpServers: [] } }),
  ];
  const ws = await UnixWebSocket.open(join(home.dir, "run", "daemon.sock"), "/acp", {}, 5000, () => lines);
  const answers: { id?: number; result?: { protocolVersion?: number; sessionId?: string } }[] = [];
  ws.on("message", (text) => {
    const msg = JSON.parse(text) as (typeof answers)[number] & { method?: string };
    if (msg.method === undefined) answers.push(msg);
  });
  await within(
    5000,
    "both answers",
    (async () => {
      while (answers.length < 2) await new Promise((r) => setTimeout(r, 5));
    })(),
  );
  assert.deepEqual(
    answers.map((a) => a.id),
    [1, 2],
  );
  assert.equal(answers[0]!.result?.protocolVersion, 1);
  assert.match(answers[1]!.result?.sessionId ?? "", /^[0-9a-f-]{36}$/);
  const closed = new Promise((r) => ws.once("close", r));
  ws.close();
  await closed;
});
