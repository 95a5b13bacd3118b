/**
 * An MCP server over Streamable HTTP, built with the MCP SDK, for end-to-end tests: tools (one
 * annotated read-only), a prompt, and a record of the headers each request carried.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

function build(): McpServer {
  const server = new McpServer({ name: "calc", version: "1.0.0" });
  server.registerTool("add", { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.registerTool("fail", { description: "Always fails.", inputSchema: {} }, async () => ({
    content: [{ type: "text", text: "the calculator is on fire" }],
    isError: true,
  }));
  server.registerTool("peek", { description: "Shows the calculator's display.", inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: "text", text: "display: 42" }],
  }));
  server.registerTool(
    "dump",
    { description: "Prints the display's memory: that many bytes.", inputSchema: { bytes: z.number().int().min(0) }, annotations: { readOnlyHint: true } },
    async ({ bytes }) => ({ content: [{ type: "text", text: `${"m".repeat(Math.max(0, bytes - 3))}END` }] }),
  );
  server.registerPrompt("review", { description: "Review a file", argsSchema: { file: z.string(), focus: z.string().optional() } }, ({ file, focus }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Review ${file} carefully${focus ? `, focusing on ${focus}` : ""}.` } }],
  }));
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let body = "";
  for await (const chunk of req) body += String(chunk);
  return body ? JSON.parse(body) : undefined;
}

export class McpHttpServer {
  readonly headers: Array<Record<string, string | string[] | undefined>> = [];
  private constructor(
    private readonly http: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<McpHttpServer> {
    let self: McpHttpServer | undefined;
    const http = createServer(async (req, res) => {
      self?.headers.push(req.headers);
      try {
        const body = req.method === "POST" ? await readJson(req) : undefined;
        // Stateless: a fresh server and transport per request, as the SDK's examples do.
        const server = build();
        const transport = new StreamableHTTPServerTransport({});
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500).end(String(err));
      }
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const address = http.address();
    const port = typeof address === "object" && address ? address.port : 0;
    self = new McpHttpServer(http, `http://127.0.0.1:${port}/mcp`);
    return self;
  }

  close(): Promise<void> {
    this.http.closeAllConnections();
    return new Promise((r) => this.http.close(() => r()));
  }
}
