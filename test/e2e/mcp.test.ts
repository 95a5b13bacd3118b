import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { McpHttpServer } from "../support/mcp-http-server.js";
import { world } from "./fixture.js";

const require = createRequire(import.meta.url);
const FS_SERVER = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

test("a real MCP server from npm over stdio: its tools reach the model and run, read-only ones without asking", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "notes.txt"), "remember the milk\n");
  const init = await agent.initialize();
  assert.deepEqual(init.agentCapabilities.mcpCapabilities, { http: true, sse: true });
  const { sessionId } = await agent.newSession(workdir, {
    mcpServers: [{ name: "fs", command: process.execPath, args: [FS_SERVER, workdir], env: [] }],
  });
  model.enqueue({ toolCalls: [{ id: "m1", name: "mcp__fs__read_text_file", arguments: { path: join(workdir, "notes.txt") } }] }, { content: ["It says to remember the milk."] });
  assert.equal((await agent.prompt(sessionId, "what is in notes.txt?")).stopReason, "end_turn");
  const names = model.requests[0]!.body.tools.map((x: { function: { name: string } }) => x.function.name);
  assert.equal(names[0], "read_file", "built-ins come first");
  assert.ok(names.includes("mcp__fs__read_text_file"));
  assert.ok(names.includes("mcp__fs__write_file"));
  const toolMessage = model.requests[1]!.body.messages.find((m: { tool_call_id?: string }) => m.tool_call_id === "m1");
  assert.match(toolMessage.content, /remember the milk/);
  assert.deepEqual(agent.agentRequests.filter((r) => r.method === "session/request_permission"), []);
  const done = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
  assert.equal(done.status, "completed");

  // A tool that writes asks first, like a command; rejected, the file stays unwritten.
  model.enqueue({ toolCalls: [{ name: "mcp__fs__write_file", arguments: { path: join(workdir, "new.txt"), content: "x" } }] }, { content: ["ok"] });
  agent.onPermission = () => ({ outcome: { outcome: "selected", optionId: "reject_once" } });
  await agent.prompt(sessionId, "write new.txt");
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 1);
  await agent.prompt(sessionId, "/mcp");
  assert.match(agent.textOf(sessionId), /fs \(stdio\): connected, \d+ tools/);
});

test("an MCP server over HTTP built with the SDK: headers sent, tools and prompts work, errors come back as tool errors", async (t) => {
  const { agent, model, workdir } = await world(t);
  const server = await McpHttpServer.start();
  t.after(() => server.close());
  await agent.initialize();
  const secret = "header-secret-0123456789";
  const { sessionId } = await agent.newSession(workdir, {
    mcpServers: [{ type: "http", name: "calc", url: server.url, headers: [{ name: "x-api-token", value: secret }] }],
  });
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  model.enqueue(
    { toolCalls: [{ id: "a", name: "mcp__calc__add", arguments: { a: 2, b: 40 } }, { id: "f", name: "mcp__calc__fail", arguments: {} }] },
    { content: ["42"] },
  );
  await agent.prompt(sessionId, "add");
  const msgs = model.requests[1]!.body.messages;
  assert.equal(msgs.find((m: { tool_call_id?: string }) => m.tool_call_id === "a").content, "42");
  assert.match(msgs.find((m: { tool_call_id?: string }) => m.tool_call_id === "f").content, /Tool error: the calculator is on fire/);
  assert.ok(server.headers.every((h) => h["x-api-token"] === secret));

  const menu = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "available_commands_update").at(-1);
  assert.ok(menu.availableCommands.some((c: { name: string }) => c.name === "calc:review"), "MCP prompts are slash commands");
  model.enqueue({ content: ["reviewed"] });
  await agent.prompt(sessionId, "/calc:review src/app.ts error handling");
  assert.equal(model.requests.at(-1)!.body.messages.at(-1).content, "Review src/app.ts carefully, focusing on error handling.");
  assert.ok(!agent.daemonLog().includes(secret));
});

test("a dead MCP server is reported, not fatal: the session and the other servers go on", async (t) => {
  const { agent, model, workdir } = await world(t);
  const server = await McpHttpServer.start();
  t.after(() => server.close());
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir, {
    mcpServers: [
      { name: "broken", command: process.execPath, args: ["-e", "console.error('cannot start: missing config'); process.exit(3)"], env: [] },
      { type: "http", name: "calc", url: server.url, headers: [] },
      { type: "http", name: "gone", url: "http://127.0.0.1:9/mcp", headers: [] },
    ],
  });
  model.enqueue({ toolCalls: [{ id: "x", name: "mcp__broken__anything", arguments: {} }] }, { content: ["fine"] });
  assert.equal((await agent.prompt(sessionId, "try")).stopReason, "end_turn");
  const names = model.requests[0]!.body.tools.map((x: { function: { name: string } }) => x.function.name);
  assert.ok(names.includes("mcp__calc__add"));
  assert.ok(!names.some((n: string) => n.startsWith("mcp__broken") || n.startsWith("mcp__gone")));
  assert.match(model.requests[1]!.body.messages.at(-1).content, /no tool named/);
  await agent.prompt(sessionId, "/status");
  const status = agent.textOf(sessionId);
  assert.match(status, /broken \(stdio\): failed/);
  assert.match(status, /gone \(http\): failed/);
  assert.match(status, /calc \(http\): connected/);
});
