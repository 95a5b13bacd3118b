import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning } from "../../shared/process.js";
import { describePids, hostPids, pidsAfterKill, stopDaemon, waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import { daemonStatus, world, within, test, processTest } from "./fixture.js";

/**
 * A sleep's command line no other run on the machine has: jobs are found machine-wide by it
 * (hostPids), and two suites side by side once saw each other's `sleep 60.31`.
 */
let sleepers = 0;
const uniqueSleep = (): string => `sleep 60.${process.pid}${++sleepers}`;

const until = async (cond: () => boolean | Promise<boolean>, what: string): Promise<void> => {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
};

const toolResults = (body: any): Record<string, string> =>
  Object.fromEntries(
    body.messages.filter((m: { role: string }) => m.role === "tool").map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]),
  );

test("a background command outlives every window; a later turn from a new window reads its new output and kills it; session close ends the rest", async (t) => {
  const w = await world(t);
  const { agent, model, workdir, home } = w;
  const ticker = "echo $$ > job.pid; i=0; while :; do i=$((i+1)); echo tick $i; echo $i > job.n; sleep 0.05; done";
  model.enqueue({ toolCalls: [{ id: "start", name: "run_command", arguments: { command: ticker, background: true } }] }, { content: ["started"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const started = await within(10_000, "the starting turn", agent.prompt(sessionId, "start the ticker"));
  assert.equal(started.stopReason, "end_turn");
  // The start asked permission like any command, and returned at once with the job's id.
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission");
  assert.equal(asked.length, 1);
  assert.match(asked[0]!.params.toolCall.title, /^Start in the background `echo/);
  assert.match(toolResults(model.requests[1]!.body).start!, /"jobId": "job-1"/);
  await until(() => existsSync(join(workdir, "job.pid")), "the job's pid file");

  // Every window goes away: the job runs on, owned by the session in the daemon.
  await agent.closeStdin();
  let status: any;
  await until(async () => {
    status = (await daemonStatus(home.dir)).liveSessions.find((s: any) => s.sessionId === sessionId);
    return status?.attachments === 0;
  }, "the window to detach");
  assert.deepEqual(
    status.jobs.map((j: any) => [j.jobId, j.state, j.command]),
    [["job-1", "running", ticker]],
  );
  // The job's process on this machine (the sandbox's, when it runs in one: `$$` inside is its own pid).
  const pid: number = status.jobs[0].pid;
  assert.ok(isRunning(pid), "the job still runs with no window attached");

  // A new window, a later turn: new output since the last read, then the kill.
  const w2 = await w.window(sessionId);
  const vendor = await w2.rpc.request("_reasonix.io/session/status", { sessionId });
  assert.deepEqual(
    vendor.jobs.map((j: any) => [j.jobId, j.state, j.pid]),
    [["job-1", "running", pid]],
  );
  await w2.prompt(sessionId, "/status");
  assert.match(w2.textOf(sessionId), /- Background jobs: `job-1` running \(pid \d+\) — `echo \$\$ > job\.pid;/);
  model.enqueue(
    { toolCalls: [{ id: "out", name: "command_output", arguments: { jobId: "job-1" } }] },
    { toolCalls: [{ id: "out2", name: "command_output", arguments: { jobId: "job-1" } }] },
    { toolCalls: [{ id: "kill", name: "command_kill", arguments: { jobId: "job-1" } }] },
    { content: ["stopped it"] },
  );
  // The first read is to hold more than one line: a warm test process gets here within one tick.
  await until(() => existsSync(join(workdir, "job.n")) && Number(readFileSync(join(workdir, "job.n"), "utf8")) >= 2, "the job's second line");
  const before = model.requests.length;
  assert.equal((await within(10_000, "the reading turn", w2.prompt(sessionId, "read and stop it"))).stopReason, "end_turn");
  const results = toolResults(model.requests.at(-1)!.body);
  assert.match(results.out!, /^Job job-1 is running/);
  const ticks = (s: string) => [...s.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
  const first = ticks(results.out!);
  assert.ok(first.length > 1 && first[0] === 1, "the first read starts at the job's first line");
  const second = ticks(results.out2!);
  // The second read has only what came after the first.
  assert.ok(
    second.every((n) => n > first.at(-1)!),
    "output already read is not repeated",
  );
  assert.match(results.kill!, /^Job job-1 was stopped\./);
  assert.equal(isRunning(pid), false);
  assert.equal(model.requests.length - before, 4);
  // No question for reading or stopping the session's own job.
  assert.equal(w2.agentRequests.filter((r) => r.method === "session/request_permission").length, 0);

  const jobsAnswer = await w2.prompt(sessionId, "/jobs");
  assert.equal(jobsAnswer.stopReason, "end_turn");
  assert.match(w2.textOf(sessionId), /`job-1` (exited|ended by SIGTERM)/);

  // A job still running when the session is closed ends with it, its whole process group.
  const sleeper = uniqueSleep();
  model.enqueue(
    { toolCalls: [{ id: "again", name: "run_command", arguments: { command: `${sleeper} & wait`, background: true } }] },
    { content: ["sleeping"] },
  );
  await within(10_000, "the second job's turn", w2.prompt(sessionId, "sleep"));
  await until(() => hostPids(sleeper).length > 0, "the sleeper");
  assert.deepEqual((await w2.rpc.request("session/close", { sessionId })) ?? {}, {});
  assert.deepEqual(hostPids(sleeper), [], "no process of the job remains after session close");
});

test("background jobs run in the daemon even when the editor offers terminals, and end when the daemon stops", async (t) => {
  const { agent, model, workdir, home } = await world(t, { clientCapabilities: { terminal: true } });
  agent.onClientRequest = (method) => {
    throw new Error(`unexpected ${method}`);
  };
  const sleeper = uniqueSleep();
  model.enqueue(
    { toolCalls: [{ id: "bg", name: "run_command", arguments: { command: `echo started > bg.pid; exec ${sleeper}`, background: true } }] },
    { content: ["running"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await within(10_000, "the turn", agent.prompt(sessionId, "start it"));
  assert.equal(agent.agentRequests.filter((r) => r.method.startsWith("terminal/")).length, 0, "no editor terminal for a background job");
  await until(() => hostPids(sleeper).length > 0, "the job");
  await stopDaemon(home.dir);
  assert.deepEqual(hostPids(sleeper), [], "the daemon's stop ended the job");
});

// Process connector only: it kills the daemon's process.
processTest("a daemon killed with its jobs running: the next daemon ends them (the very processes recorded, whole group)", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { connector: "process" });
  // Unsandboxed: a sandboxed job dies with the daemon that started it (the next test), so only a
  // job outside the sandbox can be left behind for the next daemon to end.
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  model.enqueue(
    { toolCalls: [{ id: "bg", name: "run_command", arguments: { command: "sleep 60 & echo $$ $! > pids; wait", background: true } }] },
    { content: ["running"] },
  );
  await within(10_000, "the turn", agent.prompt(sessionId, "start it"));
  await until(() => existsSync(join(workdir, "pids")) && readFileSync(join(workdir, "pids"), "utf8").trim().split(" ").length === 2, "the pids");
  const pids = readFileSync(join(workdir, "pids"), "utf8").trim().split(" ").map(Number);
  const old = await waitForDaemonPid(home.dir);
  process.kill(old, "SIGKILL");
  await waitForPidExit(old, 5000);
  await agent.closeStdin();
  assert.ok(pids.every(isRunning), "the job outlived its daemon");

  const next = spawn();
  await next.initialize();
  assert.ok(
    pids.every((pid) => !isRunning(pid)),
    "the new daemon ended the orphaned job before serving",
  );
});

// Process connector only: it kills the daemon's process.
processTest("a daemon killed with a sandboxed job running takes the job with it: nothing is left for anyone to end", async (t) => {
  const { agent, model, workdir, home } = await world(t, { connector: "process" });
  const sleeper = uniqueSleep();
  model.enqueue({ toolCalls: [{ id: "bg", name: "run_command", arguments: { command: `${sleeper} & wait`, background: true } }] }, { content: ["running"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await within(10_000, "the turn", agent.prompt(sessionId, "start it"));
  const status = (await daemonStatus(home.dir)).sandbox;
  if (!status.available) return t.skip(`no sandbox here: ${status.reason}`);
  await until(() => hostPids(sleeper).length > 0, "the job");
  const old = await waitForDaemonPid(home.dir);
  process.kill(old, "SIGKILL");
  await waitForPidExit(old, 5000);
  const left = await pidsAfterKill([sleeper], 10_000);
  assert.deepEqual(left, [], `the job ended with its daemon; still there:\n${describePids(left)}`);
});
