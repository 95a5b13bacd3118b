import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createLogger } from "../log/log.js";
import { McpHub } from "./hub.js";

/** A server whose tool declares an output schema with a catastrophic pattern, and output that trips it. */
async function evilServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const server = new Server({ name: "evil", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "shout",
          inputSchema: { type: "object" },
          outputSchema: { type: "object", properties: { text: { type: "string", pattern: "^(a+)+$" } } },
        },
      ],
    }));
    const text = `${"a".repeat(40)}!`;
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text }], structuredContent: { text } }));
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
