/**
 * The harness against a fake SDK-built agent (fixtures/fake-agent.ts), so it is known to work before
 * the real shim exists and failures in e2e tests can be trusted to be the agent's.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, afterEach, before, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentProcess, type AgentOptions, TEST_API_KEY, daemonPid, isAlive, makeHome, type TestHome } from "./harness.js";

const FAKE_AGENT = fileURLToPath(new URL("./fixtures/fake-agent.js", import.meta.url));

let home: TestHome;
const spawned: AgentProcess[] = [];

before(async () => {
  home = await makeHome();
});
after(async () => {
  await home.cleanup();
});
afterEach(async () => {
  await Promise.all(spawned.splice(0).map((a) => a.kill("SIGKILL")));
});

function fake(options: Partial<AgentOptions> = {}): AgentProcess {
  const agent = AgentProcess.spawn({ home: home.dir, command: [process.execPath, FAKE_AGENT], ...options });
  spawned.push(agent);
  return agent;
}

test("makeHome gives a short private folder", () => {
  assert.ok(home.dir.startsWith("/tmp/rx-"));
  assert.ok(join(home.dir, "run", "daemon.sock").length < 60);
});

test("SDK mode: initialize, session, prompt; updates recorded in order and the wire is clean", async () => {
  const agent = fake();
  const init = await agent.initialize();
  assert.equal(init.protocolVersion, 1);
  const { sessionId } = await agent.newSession("/tmp");
  const response = await agent.prompt(sessionId, "hello");
  assert.equal(response.stopReason, "end_turn");

  // Updates sent before the response are recorded by the time the response resolves.
  assert.equal(agent.textOf(sessionId), "hi there");
  assert.deepEqual(
    agent.updates.map((u) => u.update.sessionUpdate),
    ["agent_message_chunk", "agent_message_chunk"],
  );
  assert.equal(agent.updates[0]!.sessionId, sessionId);
  assert.ok(agent.stdinLines.some((l) => JSON.parse(l).method === "initialize"));
  assert.equal(agent.stdoutLines.length, agent.checker.agentMessages);
  assert.ok(agent.stdoutLines.length >= 5);
  agent.assertCleanWire();

  assert.equal(await agent.closeStdin(), 0);
});

test("default permission handler picks allow_once; tests can replace it", async () => {
  const agent = fake();
  await agent.initialize();
  const { sessionId } = await agent.newSession("/tmp");
  await agent.prompt(sessionId, "permission");
  assert.equal(agent.agentRequests.length, 1);
  assert.equal(agent.agentRequests[0]!.method, "session/request_permission");
  assert.match(agent.textOf(sessionId), /permission: allow$/);

  const from = agent.updates.length;
  agent.onPermission = () => ({ outcome: { outcome: "cancelled" } });
  await agent.prompt(sessionId, "permission");
  assert.equal(agent.textOf(sessionId, "agent_message_chunk", from), "permission: cancelled");
  const done = await agent.waitForUpdate((u) => u.update.sessionUpdate === "tool_call_update", 1000, from);
  assert.deepEqual(done.update.rawOutput, { outcome: "cancelled" });
  agent.assertCleanWire();
});

test("client requests: method not found by default, answered by onClientRequest", async () => {
  const agent = fake({ clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } } });
  await agent.initialize();
  const { sessionId } = await agent.newSession("/tmp");
  await agent.prompt(sessionId, "fs");
  assert.equal(agent.textOf(sessionId), "fs error -32601");

  const from = agent.updates.length;
  const calls: string[] = [];
  agent.onClientRequest = (method, params) => {
    calls.push(`${method} ${params.path}`);
    return { content: "box-1" };
  };
  await agent.prompt(sessionId, "fs");
  assert.deepEqual(calls, ["fs/read_text_file /etc/hostname"]);
  assert.equal(agent.textOf(sessionId, "agent_message_chunk", from), "read: box-1");
  agent.assertCleanWire();
});

test("assertCleanWire reports schema violations with the method and the field", async () => {
  const agent = fake();
  await agent.initialize();
  const { sessionId } = await agent.newSession("/tmp");
  await agent.prompt(sessionId, "bad-update");
  assert.throws(
    () => agent.assertCleanWire(),
    (err: Error) => {
      assert.match(err.message, /session\/update/);
      assert.match(err.message, /currentModeId/);
      return true;
    },
  );
});

test("non-JSON stdout is flagged and kept from the SDK, which keeps working", async () => {
  const agent = fake();
  await agent.initialize();
  const { sessionId } = await agent.newSession("/tmp");
  await agent.prompt(sessionId, "stdout-junk");
  assert.ok(agent.stdoutLines.includes("this is not json"));
  assert.equal(agent.textOf(sessionId), "after junk");
  // The SDK never saw the junk, so it never answered it with a -32700 to the agent.
  assert.ok(!agent.stdinLines.some((l) => l.includes("-32700")));
  assert.throws(() => agent.assertCleanWire(), /not JSON/);
  const again = await agent.prompt(sessionId, "hello");
  assert.equal(again.stopReason, "end_turn");
});

test("raw writes beside the SDK: malformed lines, raw requests, no confusion of ids", async () => {
  const agent = fake();
  await agent.initialize();

  const noise: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => noise.push(args);
  try {
    const from = agent.messages.length;
    agent.writeRaw("{not json\n");
    const parseError = await agent.waitForLine((m) => m.error?.code === -32700, 5000, from);
    assert.equal(parseError.id, null);

    const echoed = await agent.rawRequest({ id: "raw-1", method: "_test/echo", params: { a: 1 } });
    assert.deepEqual(echoed.result, { echo: { a: 1 } });
    const unknown = await agent.rawRequest({ id: "raw-2", method: "_nope", params: {} });
    assert.equal(unknown.error.code, -32601);

    // A raw line split across writes is one line to the agent and to the tee.
    agent.writeRaw('{"jsonrpc":"2.0","id":"raw-3","method":"_test/');
    agent.writeRaw('echo","params":{"b":2}}\n');
    const split = await agent.waitForLine((m) => m.id === "raw-3");
    assert.deepEqual(split.result, { echo: { b: 2 } });
    assert.ok(agent.stdinLines.includes('{"jsonrpc":"2.0","id":"raw-3","method":"_test/echo","params":{"b":2}}'));

    // SDK requests still resolve normally afterwards.
    const { sessionId } = await agent.newSession("/tmp");
    assert.match(sessionId, /^sess-/);
  } finally {
    console.error = original;
  }
  assert.deepEqual(noise, [], "the SDK was fed responses it did not ask for");
  agent.assertCleanWire();
});

test("rpc errors from the agent reject with RequestError carrying the code", async () => {
  const agent = fake();
  await agent.initialize();
  await assert.rejects(agent.rpc.request("_does/not/exist", {}), (err: unknown) => {
    assert.ok(err instanceof acp.RequestError);
    assert.equal(err.code, -32601);
    return true;
  });
  await assert.rejects(agent.rpc.request("session/new", { cwd: 5 }), (err: any) => err.code === -32602);
  agent.assertCleanWire();
});

test("raw mode: the harness itself speaks JSON-RPC and answers agent requests", async () => {
  const agent = fake({ raw: true });
  assert.equal(agent.sdk, undefined);
  const init = await agent.initialize();
  assert.equal(init.agentInfo.name, "fake-agent");
  const { sessionId } = await agent.newSession("/tmp");
  const res = await agent.prompt(sessionId, "permission");
  assert.equal(res.stopReason, "end_turn");
  assert.match(agent.textOf(sessionId), /permission: allow$/);
  await agent.prompt(sessionId, "fs");
  assert.match(agent.textOf(sessionId), /fs error -32601$/);
  await assert.rejects(agent.rpc.request("_nope", {}), (err: any) => err instanceof acp.RequestError && err.code === -32601);

  // The answer to the permission request went through the tee like any client line.
  assert.ok(agent.stdinLines.some((l) => /"outcome":\{"outcome":"selected","optionId":"allow"\}/.test(l)));
  agent.assertCleanWire();
  assert.equal(await agent.closeStdin(), 0);
});

test("cancel: updates before the cancelled response are all recorded", async () => {
  const agent = fake();
  await agent.initialize();
  const { sessionId } = await agent.newSession("/tmp");
  const turn = agent.prompt(sessionId, "wait-for-cancel");
  await agent.waitForUpdate((u) => u.sessionId === sessionId && u.update.content?.text === "waiting");
  await agent.cancel(sessionId);
  assert.equal((await turn).stopReason, "cancelled");
  assert.equal(agent.textOf(sessionId), "waitingcancelled now");
  agent.assertCleanWire();
});

test("an agent that dies fails waits and requests fast, with stderr in the message", async () => {
  const agent = fake();
  await agent.initialize();
  const { sessionId } = await agent.newSession("/tmp");
  const turn = agent.prompt(sessionId, "exit");
  await assert.rejects(turn, /exiting on request/);
  assert.deepEqual(await agent.exited, { code: 3, signal: null });
  await assert.rejects(
    agent.waitForUpdate(() => false, 60_000),
    /agent exited before the expected session\/update arrived[\s\S]*code 3/,
  );
});

test("kill() resolves once the process is gone", async () => {
  const agent = fake();
  await agent.initialize();
  await agent.kill("SIGKILL");
  assert.equal((await agent.exited).signal, "SIGKILL");
  assert.equal(isAlive(agent.child.pid!), false);
});

test("environment: DEEPSEEK_* and REASONIX_* come only from the harness", async () => {
  process.env.DEEPSEEK_API_KEY = "sk-real-key-from-shell";
  process.env.REASONIX_MODEL = "shell-model";
  try {
    const names = ["REASONIX_HOME", "REASONIX_MODEL", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "NODE_TEST_CONTEXT", "EXTRA"];
    const bare = fake();
    await bare.initialize();
    assert.deepEqual(await bare.rpc.request("_test/env", { names }), {
      REASONIX_HOME: home.dir,
      REASONIX_MODEL: null,
      DEEPSEEK_API_KEY: null,
      DEEPSEEK_BASE_URL: null,
      NODE_TEST_CONTEXT: null,
      EXTRA: null,
    });

    const withModel = fake({ model: { url: "http://127.0.0.1:9" }, env: { EXTRA: "1" } });
    await withModel.initialize();
    const env = await withModel.rpc.request("_test/env", { names });
    assert.equal(env.DEEPSEEK_API_KEY, TEST_API_KEY);
    assert.equal(env.DEEPSEEK_BASE_URL, "http://127.0.0.1:9");
    assert.equal(env.EXTRA, "1");
  } finally {
    delete process.env.DEEPSEEK_API_KEY;
    delete process.env.REASONIX_MODEL;
  }
});

test("waitForLine and waitForUpdate time out with a useful message", async () => {
  const agent = fake();
  await agent.initialize();
  await assert.rejects(
    agent.waitForLine((m) => m.method === "never", 100),
    /no matching stdout message within 100 ms[\s\S]*last stdout lines/,
  );
  await assert.rejects(
    agent.waitForUpdate(() => false, 100),
    /no matching session\/update within 100 ms/,
  );
});

test("cleanup stops the daemon named in run/daemon.json (SIGTERM, then SIGKILL) and removes the folder", async () => {
  const local = await makeHome();
  mkdirSync(join(local.dir, "run"), { recursive: true });
  // Ignores SIGTERM, so cleanup has to escalate.
  const stubborn = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); process.stdout.write('armed\\n'); setInterval(() => {}, 1000)"], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
  });
  // It says so once its SIGTERM handler is in place.
  await new Promise<void>((resolve) => stubborn.stdout!.once("data", () => resolve()));
  stubborn.stdout!.destroy();
  stubborn.unref();
  const pid = stubborn.pid!;
  writeFileSync(join(local.dir, "run", "daemon.json"), JSON.stringify({ pid, wire: 1 }));
  assert.equal(daemonPid(local.dir), pid);
  assert.ok(isAlive(pid));

  await local.cleanup();
  assert.equal(isAlive(pid), false);
  assert.equal(existsSync(local.dir), false);
});

test("cleanup kills agents still running in that home", async () => {
  const local = await makeHome();
  const agent = AgentProcess.spawn({ home: local.dir, command: [process.execPath, FAKE_AGENT] });
  await agent.initialize();
  await local.cleanup();
  assert.ok(agent.exitStatus);
  assert.equal(daemonPid(local.dir), undefined);
});
