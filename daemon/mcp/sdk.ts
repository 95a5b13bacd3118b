/**
 * What the daemon takes from the MCP SDK at run time, in one module. The build bundles it into a
 * file of its own (dist/vendor/mcp-sdk.cjs, scripts/bundle.js) that the daemon loads when a session
 * first names an MCP server: the client from the package's files took some 240 ms to load.
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
export { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
