import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { McpHttpServer } from "../support/mcp-http-server.js";
import { world } from "./fixture.js";

const require = createRequire(import.meta.url);
const FS_SERVER = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const select = (optionId: string) => () => ({ outcome: { outcome: "selected", optionId } });

test("a real MCP server from npm over stdio: its tools reach the model and run; a read-only one asks first like any other", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "notes.txt"), "remember the milk\n");
  const init = await agent.initialize();
  assert.deepEqual(init.agentCapabilities.mcpCapabilities, { http: true, sse: true });
  const { sessionId } = await agent.newSession(workdir, {
    mcpServers: [{ name: "fs", command: process.execPath, args: [FS_SERVER, workdir], env: [] }],
  });
  model.enqueue(
    { toolCalls: [{ id: "m1", name: "mcp__fs__read_text_file", arguments: { path: join(workdir, "notes.txt") } }] },
    { content: ["It says to remember the milk."] },
  );
  assert.equal((await agent.prompt(sessionId, "what is in notes.txt?")).stopReason, "end_turn");
  const names = model.requests[0]!.body.tools.map((x: { function: { name: string } }) => x.function.name);
  assert.equal(names[0], "read_file", "built-ins come first");
  assert.ok(names.includes("mcp__fs__read_text_file"));
  assert.ok(names.includes("mcp__fs__write_file"));
  const toolMessage = model.requests[1]!.body.messages.find((m: { tool_call_id?: string }) => m.tool_call_id === "m1");
  assert.match(toolMessage.content, /remember the milk/);
  // The server's readOnlyHint picks the kind; it does not skip the question (the harness allows once).
  const asked = () => agent.agentRequests.filter((r) => r.method === "session/request_permission");
  assert.equal(asked().length, 1);
  assert.equal(asked()[0]!.params.toolCall.kind, "read");
  const done = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .at(-1);
  assert.equal(done.status, "completed");

  // A tool that writes asks first too; rejected, the file stays unwritten.
  model.enqueue({ toolCalls: [{ name: "mcp__fs__write_file", arguments: { path: join(workdir, "new.txt"), content: "x" } }] }, { content: ["ok"] });
  agent.onPermission = () => ({ outcome: { outcome: "selected", optionId: "reject_once" } });
  await agent.prompt(sessionId, "write new.txt");
  assert.equal(asked().length, 2);
  assert.equal(asked()[1]!.params.toolCall.kind, "other");
  assert.equal(existsSync(join(workdir, "new.txt")), false);
  await agent.prompt(sessionId, "/mcp");
  assert.match(agent.textOf(sessionId), /fs \(stdio\): connected, \d+ tools/);
});

test("an MCP tool the server calls read-only asks under workspace-write and read-only; always covers that one tool; danger-full-access never asks", async (t) => {
  const { agent, model, workdir } = await world(t);
  const server = await McpHttpServer.start();
  t.after(() => server.close());
  await agent.initialize();
  const mcpServers = [{ type: "http", name: "calc", url: server.url, headers: [] }];
  const { sessionId } = await agent.newSession(workdir, { mcpServers });
  const asked = () => agent.agentRequests.filter((r) => r.method === "session/request_permission");
  const result = (id: string) => model.requests.flatMap((r) => r.body.messages).find((m: { tool_call_id?: string }) => m.tool_call_id === id)?.content;

  // workspace-write (the default): the first peek asks; "always" stops the second.
  agent.onPermission = select("allow_always");
  model.enqueue(
    { toolCalls: [{ id: "p1", name: "mcp__calc__peek", arguments: {} }] },
    { toolCalls: [{ id: "p2", name: "mcp__calc__peek", arguments: {} }] },
    { content: ["peeked twice"] },
  );
  await agent.prompt(sessionId, "peek twice");
  assert.equal(asked().length, 1);
  const question = asked()[0]!.params;
  assert.equal(question.toolCall.kind, "read");
  assert.match(question.toolCall.title, /peek \(calc; the server says it only reads\)/);
  assert.equal(question.options.find((o: { kind: string }) => o.kind === "allow_always").name, "Always allow `peek` of MCP server `calc` in this session");
  assert.equal(result("p1"), "display: 42");
  assert.equal(result("p2"), "display: 42");

  // Another tool of the same server still asks; peek still does not.
  agent.onPermission = select("reject_once");
  model.enqueue(
    {
      toolCalls: [
        { id: "a1", name: "mcp__calc__add", arguments: { a: 1, b: 2 } },
        { id: "p3", name: "mcp__calc__peek", arguments: {} },
      ],
    },
    { content: ["no sum"] },
  );
  await agent.prompt(sessionId, "add and peek");
  assert.equal(asked().length, 2);
  assert.equal(asked()[1]!.params.toolCall.title, "add (calc)");
  assert.match(result("a1"), /rejected/);
  assert.equal(result("p3"), "display: 42");
  const status = await agent.rpc.request("_reasonix.io/session/status", { sessionId });
  assert.deepEqual(status.grants, [{ decision: "allow", tool: "mcp__calc__peek", match: "mcp_tool", covers: "peek (MCP server calc)" }]);

  // read-only, in a session of its own (grants are per session): peek asks.
  const other = (await agent.newSession(workdir, { mcpServers })).sessionId;
  await agent.rpc.request("session/set_config_option", { sessionId: other, configId: "tool_approval", value: "read-only" });
  agent.onPermission = select("reject_once");
  model.enqueue({ toolCalls: [{ id: "p4", name: "mcp__calc__peek", arguments: {} }] }, { content: ["refused"] });
  await agent.prompt(other, "peek");
  assert.equal(asked().length, 3);
  assert.equal(asked()[2]!.params.sessionId, other);
  assert.match(result("p4"), /rejected/);

  // danger-full-access: nothing asks, hinted or not.
  await agent.rpc.request("session/set_config_option", { sessionId: other, configId: "tool_approval", value: "danger-full-access" });
  agent.onPermission = () => {
    throw new Error("nothing may ask under danger-full-access");
  };
  model.enqueue(
    {
      toolCalls: [
        { id: "p5", name: "mcp__calc__peek", arguments: {} },
        { id: "a2", name: "mcp__calc__add", arguments: { a: 2, b: 3 } },
      ],
    },
    { content: ["done"] },
  );
  await agent.prompt(other, "peek and add");
  assert.equal(asked().length, 3);
  assert.equal(result("p5"), "display: 42");
  assert.equal(result("a2"), "5");
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
    {
      toolCalls: [
        { id: "a", name: "mcp__calc__add", arguments: { a: 2, b: 40 } },
        { id: "f", name: "mcp__calc__fail", arguments: {} },
      ],
    },
    { content: ["42"] },
  );
  await agent.prompt(sessionId, "add");
  const msgs = model.requests[1]!.body.messages;
  assert.equal(msgs.find((m: { tool_call_id?: string }) => m.tool_call_id === "a").content, "42");
  assert.match(msgs.find((m: { tool_call_id?: string }) => m.tool_call_id === "f").content, /Tool error: the calculator is on fire/);
  assert.ok(server.headers.every((h) => h["x-api-token"] === secret));

  const menu = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "available_commands_update")
    .at(-1);
  assert.ok(
    menu.availableCommands.some((c: { name: string }) => c.name === "calc:review"),
    "MCP prompts are slash commands",
  );
  model.enqueue({ content: ["reviewed"] });
  await agent.prompt(sessionId, "/calc:review src/app.ts error handling");
  assert.equal(model.requests.at(-1)!.body.messages.at(-1).content, "Review src/app.ts carefully, focusing on error handling.");
  assert.ok(!agent.daemonLog().includes(secret));
});

test("a dead MCP server is reported, not fatal: the session and the other servers go on", async (t) => {
  const { agent, model, workdir } = await world(t);
  const token = "svc-7d1e0b93aa";
  const server = await McpHttpServer.start();
  t.after(() => server.close());
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir, {
    mcpServers: [
      {
        name: "broken",
        command: process.execPath,
        args: ["-e", "console.error(`cannot start: missing config for ${process.env.SERVICE_TOKEN}`); process.exit(3)"],
        env: [{ name: "SERVICE_TOKEN", value: token }],
      },
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
  // The user hears each failure in that first turn, with its cause, once.
  const notices = () => agent.updatesFor(sessionId).filter((u) => u._meta?.["reasonix.io"]?.kind === "notice");
  assert.equal(notices().length, 1);
  const told = notices()[0].content.text as string;
  assert.match(
    told,
    /^\[notice\] MCP server "broken" could not start: .*cannot start: missing config for \[redacted\].*\. Its tools are not offered; \/mcp lists the servers\.$/m,
  );
  assert.match(told, /^\[notice\] MCP server "gone" could not start: fetch failed \(.+\)\. Its tools/m);
  assert.doesNotMatch(told, /"calc"/, "a server that connected says nothing");
  model.enqueue({ content: ["again"] });
  await agent.prompt(sessionId, "again");
  assert.equal(notices().length, 1, "said once, not at every turn");
  await agent.prompt(sessionId, "/status");
  const status = agent.textOf(sessionId);
  assert.match(status, /broken \(stdio\): failed/);
  assert.match(status, /gone \(http\): failed/);
  assert.match(status, /calc \(http\): connected/);
  // The value the server was given and printed is in neither what the user saw nor the daemon's log.
  assert.ok(!JSON.stringify(agent.updates).includes(token));
  assert.ok(!agent.daemonLog().includes(token));
});
