import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createLogger } from "../log/log.js";
import { McpHub } from "./hub.js";

/** An MCP server over HTTP that `define` gives its handlers; each request waits for `gate` first. */
async function httpServer(define: (server: Server) => void, gate: Promise<void> = Promise.resolve()): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    await gate;
    const server = new Server({ name: "test", version: "1.0.0" }, { capabilities: { tools: {} } });
    define(server);
    const transport = new StreamableHTTPServerTransport({});
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => {
      http.closeAllConnections();
      return new Promise((resolve) => http.close(() => resolve()));
    },
  };
}

/** A server whose tool declares an output schema with a catastrophic pattern, and output that trips it. */
function evilServer(): ReturnType<typeof httpServer> {
  const text = `${"a".repeat(40)}!`;
  return httpServer((server) => {
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "shout",
          inputSchema: { type: "object" },
          outputSchema: { type: "object", properties: { text: { type: "string", pattern: "^(a+)+$" } } },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text }], structuredContent: { text } }));
  });
}

test("a tool's structured output never meets its server's own output-schema pattern on the loop", { timeout: 20_000 }, async (t) => {
  const server = await evilServer();
  const hub = new McpHub(createLogger(undefined, "silent"));
  t.after(async () => {
    await hub.close();
    await server.close();
  });
  hub.start([{ type: "http", name: "evil", url: server.url, headers: [] }], {}, process.cwd());
  await hub.ready(10_000);
  assert.deepEqual(
    hub.tools().map((tool) => tool.name),
    ["shout"],
  );
  // Ajv ran ^(a+)+$ over forty a's and a "!": about 2^40 steps before this answered.
  const r = await hub.callTool("evil", "shout", {}, new AbortController().signal);
  assert.equal(r.text, `${"a".repeat(40)}!`);
  assert.equal(r.isError, false);
});

test("what the user hears of the servers: a failure once with its cause (given secrets redacted), a late one, then its joining", {
  timeout: 120_000,
}, async (t) => {
  let open!: () => void;
  const late = await httpServer(
    (server) => server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: "wave", inputSchema: { type: "object" } }] })),
    new Promise<void>((resolve) => (open = resolve)),
  );
  const hub = new McpHub(createLogger(undefined, "silent"));
  t.after(async () => {
    open();
    await hub.close();
    await late.close();
  });
  const token = "tok-4f9a1c77e2";
  hub.start(
    [
      { type: "http", name: "late", url: late.url, headers: [] },
      {
        name: "leaky",
        command: process.execPath,
        args: ["-e", "console.error(`cannot log in with ${process.env.SERVICE_TOKEN} ${'x'.repeat(400)}`); process.exit(3)"],
        env: [{ name: "SERVICE_TOKEN", value: token }],
      },
    ],
    {},
    process.cwd(),
  );
  // The late one is held until opened; the other fails once its process has run (a moment, or more under load).
  for (let i = 0; i < 600 && hub.status().find((x) => x.name === "leaky")?.status !== "failed"; i++) await sleep(50);
  const first = hub.news(15_000);
  assert.equal(first.joined, false);
  assert.equal(first.lines.length, 2, first.lines.join("\n"));
  assert.equal(first.lines[0], 'MCP server "late" has not answered in 15 s; its tools join the turn after it does.');
  assert.match(
    first.lines[1]!,
    /^MCP server "leaky" could not start: .*cannot log in with \[redacted\] x+…\. Its tools are not offered; \/mcp lists the servers\.$/,
  );
  assert.ok(first.lines[1]!.length < 500, "the server's page of stderr is cut to a sentence");
  assert.ok(!JSON.stringify(hub.status()).includes(token), "/mcp's report does not hold the token either");
  assert.deepEqual(hub.news(15_000), { lines: [], joined: false }, "each change is said once");

  open();
  await hub.ready(60_000);
  assert.deepEqual(hub.news(15_000), { lines: ['MCP server "late" answered; its one tool is offered from this turn on.'], joined: true });
  assert.deepEqual(
    hub.tools().map((tool) => tool.name),
    ["wave"],
  );
  assert.deepEqual(hub.news(15_000), { lines: [], joined: false });
});
