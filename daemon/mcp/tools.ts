/**
 * A session's MCP tools in the shape of our own tools, so the runner reports, gates and routes them
 * like any other call. Tools the server marks read-only run like reads; the rest ask as commands
 * do (an "always" answer covers that one tool for the session).
 */
import type { Tool, ToolResult } from "../tools/types.js";
import { mcpToolName, type McpHub, type McpToolInfo } from "./hub.js";

function asTool(hub: McpHub, info: McpToolInfo): Tool {
  const name = mcpToolName(info.server, info.name);
  return {
    name,
    description: info.description,
    parameters: info.inputSchema.type === "object" ? info.inputSchema : { type: "object", properties: {} },
    kind: info.readOnly ? "read" : "other",
    prepare(rawArgs, ctx) {
      if (rawArgs === null || typeof rawArgs !== "object" || Array.isArray(rawArgs)) {
        return { ok: false, error: `invalid arguments for ${name}: an object is expected` };
      }
      const args = rawArgs as Record<string, unknown>;
      return {
        ok: true,
        call: {
          title: `${info.name} (${info.server})`,
          kind: info.readOnly ? "read" : "other",
          locations: [],
          access: info.readOnly ? { type: "read", paths: [] } : { type: "execute", command: name, cwd: ctx.cwd },
          async run(runCtx): Promise<ToolResult> {
            try {
              const r = await hub.callTool(info.server, info.name, args, runCtx.signal);
              return { output: r.isError ? `Tool error: ${r.text}` : r.text, failed: r.isError, content: [{ type: "content", content: { type: "text", text: r.text } }] };
            } catch (err) {
              return { output: `Tool error: ${(err as Error).message}`, failed: true };
            }
          },
        },
      };
    },
  };
}

export function mcpTools(hub: McpHub): Tool[] {
  return hub.tools().map((t) => asTool(hub, t));
}
