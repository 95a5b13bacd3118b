/**
 * A session's MCP tools in the shape of our own tools, so the runner reports, gates and routes them
 * like any other call. Every one asks before its first use unless the preset is danger-full-access:
 * a server's readOnlyHint is only its own claim, so it picks the kind and the wording of the
 * question, never whether to ask. An "always" answer covers that one tool of that one server.
 */
import type { Tool, ToolResult } from "../tools/types.js";
import { mcpToolName, type McpHub, type McpToolInfo } from "./hub.js";
import { errorText } from "../../shared/error-text.js";

function asTool(hub: McpHub, info: McpToolInfo): Tool {
  const name = mcpToolName(info.server, info.name);
  return {
    name,
    description: info.description,
    parameters: info.inputSchema.type === "object" ? info.inputSchema : { type: "object", properties: {} },
    kind: info.readOnly ? "read" : "other",
    prepare(rawArgs) {
      if (rawArgs === null || typeof rawArgs !== "object" || Array.isArray(rawArgs)) {
        return { ok: false, error: `invalid arguments for ${name}: an object is expected` };
      }
      const args = rawArgs as Record<string, unknown>;
      return {
        ok: true,
        call: {
          title: info.readOnly ? `${info.name} (${info.server}; the server says it only reads)` : `${info.name} (${info.server})`,
          kind: info.readOnly ? "read" : "other",
          locations: [],
          access: { type: "mcp", server: info.server, name: info.name, readOnly: info.readOnly },
          async run(runCtx): Promise<ToolResult> {
            try {
              const r = await hub.callTool(info.server, info.name, args, runCtx.signal);
              return {
                output: r.isError ? `Tool error: ${r.text}` : r.text,
                failed: r.isError,
                content: [{ type: "content", content: { type: "text", text: r.text } }],
              };
            } catch (err) {
              return { output: `Tool error: ${errorText(err)}`, failed: true };
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
