/**
 * MCP server processes belong to their session: closing the session or stopping the daemon ends
 * them, including a server stuck in its handshake and the processes it started itself.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { BIN, REPO_ROOT } from "../support/harness.js";
import { daemonStatus, world, processTest } from "./fixture.js";

const run = promisify(execFile);

/** A stdio "server" that never answers initialize, and starts a child of its own that lingers too. */
function silentServer(marker: string) {
  const child = `require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "${marker}-child"], { stdio: "ignore" }); setInterval(() => {}, 1000);`;
  return { name: "silent", command: process.execPath, args: ["-e", child, marker], env: [] };
}

/** Live processes whose command line carries the marker. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z") found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

async function until(what: string, pred: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a stdio MCP server that never answers initialize is ended, with its own child, when its session closes", async (t) => {
  const { agent, workdir } = await world(t);
  const marker = `rx-mcp-${randomUUID()}`;
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir, { mcpServers: [silentServer(marker)] });
  await until("the server and its child running", () => processesWith(marker).length === 2);
  await agent.rpc.request("session/close", { sessionId });
  await until("no process of the server left", () => processesWith(marker).length === 0);
  assert.deepEqual(processesWith(marker), []);
});

processTest("stopping the daemon ends every session's MCP servers, handshake or not", async (t) => {
  // A real daemon process: `daemon stop` waits for it to exit.
  const { agent, workdir, home } = await world(t, { connector: "process" });
  const marker = `rx-mcp-${randomUUID()}`;
  await agent.initialize();
  await agent.newSession(workdir, { mcpServers: [silentServer(marker)] });
  await until("the server and its child running", () => processesWith(marker).length === 2);
  assert.equal((await daemonStatus(home.dir)).sessions.live, 1);
  await agent.closeStdin();
  await run(process.execPath, [BIN, "daemon", "stop"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  await until("no process of the server left", () => processesWith(marker).length === 0);
  assert.deepEqual(processesWith(marker), []);
});

test("an MCP server slower than mcpStartSeconds: the first turn goes on without it and says so; its tools join the turn after it answers", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { REASONIX_MCP_START_SECONDS: "1" } });
  // The elicitation fixture (two tools), started once the test lets it: the daemon's initialize waits in its stdin.
  const fixture = pathToFileURL(join(REPO_ROOT, "dist", "test", "support", "fixtures", "elicit-server.js")).href;
  const gate = join(workdir, "start-now");
  const wait = `const t = setInterval(() => { if (require("fs").existsSync(${JSON.stringify(gate)})) { clearInterval(t); import(${JSON.stringify(fixture)}); } }, 20);`;
  const server = { name: "deployer", command: process.execPath, args: ["-e", wait], env: [] };
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir, { mcpServers: [server] });
  const toolNames = () => model.requests.at(-1)!.body.tools.map((x: { function: { name: string } }) => x.function.name) as string[];
  const noticesFrom = (from: number) =>
    agent
      .updatesFor(sessionId, from)
      .filter((u) => u._meta?.["reasonix.io"]?.kind === "notice")
      .map((u) => u.content.text as string);

  model.enqueue({ content: ["first"] });
  let from = agent.updates.length;
  await agent.prompt(sessionId, "first");
  assert.ok(!toolNames().some((n) => n.startsWith("mcp__deployer")), "not offered before it answered");
  assert.deepEqual(noticesFrom(from), ['[notice] MCP server "deployer" has not answered in 1 s; its tools join the turn after it does.\n\n']);

  // /mcp reads the server's state without a model round; asked until it connected (bounded).
  writeFileSync(gate, "");
  let report = "";
  for (let i = 0; i < 600 && !/deployer \(stdio\): connected/.test(report); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    const at = agent.updates.length;
    await agent.prompt(sessionId, "/mcp");
    report = agent.textOf(sessionId, "agent_message_chunk", at);
  }
  assert.match(report, /deployer \(stdio\): connected, 2 tools/);

  model.enqueue({ content: ["second"] });
  from = agent.updates.length;
  await agent.prompt(sessionId, "second");
  assert.ok(toolNames().includes("mcp__deployer__deploy"), "offered from the turn after it answered");
  assert.deepEqual(noticesFrom(from), ['[notice] MCP server "deployer" answered; its 2 tools are offered from this turn on.\n\n']);
  const offered = toolNames();

  model.enqueue({ content: ["third"] });
  from = agent.updates.length;
  await agent.prompt(sessionId, "third");
  assert.deepEqual(toolNames(), offered, "the list stays as it is from then on");
  assert.deepEqual(noticesFrom(from), []);
});

test("a stdio MCP server that exits mid-session is reported and started again before the next turn", async (t) => {
  const { agent, model, workdir } = await world(t);
  const server = { name: "crashy", command: process.execPath, args: [join(REPO_ROOT, "dist", "test", "support", "fixtures", "crashy-server.js")], env: [] };
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir, { mcpServers: [server] });
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  const toolText = (id: string): string =>
    String(model.requests.at(-1)!.body.messages.find((m: { role: string; tool_call_id?: string }) => m.role === "tool" && m.tool_call_id === id)?.content);
  model.enqueue(
    {
      toolCalls: [
        { id: "p1", name: "mcp__crashy__pid", arguments: {} },
        { id: "d1", name: "mcp__crashy__die", arguments: {} },
      ],
    },
    { content: ["ok"] },
  );
  await agent.prompt(sessionId, "first");
  const first = /pid (\d+)/.exec(toolText("p1"))?.[1];
  assert.ok(first, toolText("p1"));
  await until("the server gone", () => !existsSync(`/proc/${first}`) || readFileSync(`/proc/${first}/stat`, "utf8").includes(") Z"));
  // The daemon hears of the exit when the server's pipes close, a moment after the process is gone:
  // ask /mcp until it says so (bounded).
  let report = "";
  for (let i = 0; i < 100 && !/crashy.*(failed|exited)/s.test(report); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    const from = agent.updates.length;
    assert.equal((await agent.prompt(sessionId, "/mcp")).stopReason, "end_turn");
    report = agent.textOf(sessionId, "agent_message_chunk", from);
  }
  assert.match(report, /crashy.*(failed|exited)/s, "the exit is reported");
  model.enqueue({ toolCalls: [{ id: "p2", name: "mcp__crashy__pid", arguments: {} }] }, { content: ["ok"] });
  const from = agent.updates.length;
  await agent.prompt(sessionId, "second");
  const second = /pid (\d+)/.exec(toolText("p2"))?.[1];
  assert.ok(second && second !== first, `a new server answered: ${toolText("p2")}`);
  // The turn that started it again says so, once, with why it had stopped.
  const notices = (since: number) => agent.updatesFor(sessionId, since).filter((u) => u._meta?.["reasonix.io"]?.kind === "notice");
  assert.deepEqual(
    notices(from).map((u) => u.content.text),
    ['[notice] MCP server "crashy" had stopped (the server exited) and was started again.\n\n'],
  );
  model.enqueue({ content: ["quiet"] });
  const later = agent.updates.length;
  await agent.prompt(sessionId, "third");
  assert.deepEqual(notices(later), []);
});
