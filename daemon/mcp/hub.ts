/**
 * A session's MCP servers (the ones its client passed in mcpServers): connected in the background
 * with @modelcontextprotocol/sdk, their tools offered to the model as `mcp__<server>__<tool>` and
 * their prompts as `/<server>:<prompt>`. A server that fails to start or dies is reported, never
 * fatal: the session and the other servers go on. The SDK loads on first use.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { Logger } from "../log/log.js";
import type { McpServer } from "../../shared/acp-schemas.js";
import { endTree, processTree } from "./process-tree.js";
import type { InteractionRequest, InteractionResult } from "./interaction.js";
import { errorText } from "../../shared/error-text.js";
import { oneSentence, redact } from "../../shared/redact.js";

export interface McpToolInfo {
  server: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

export interface McpPromptInfo {
  server: string;
  name: string;
  description: string;
  args: string[];
}

interface ServerState {
  name: string;
  transport: "stdio" | "http" | "sse";
  status: "connecting" | "connected" | "failed" | "closed";
  error?: string;
  client?: Client;
  /** Set from the moment it is created, before the handshake: closing must reach a server stuck in it. */
  closeTransport?: () => Promise<void>;
  /** The stdio server's process, once spawned. */
  pid?: number;
  /** It was connected and then exited: started again at the next prompt or reload. */
  crashed?: boolean;
  /** Why it had exited, once it was started again, until the user hears of it (news()). */
  restartedAfter?: string;
  /** How to start it again. */
  origin?: { spec: McpServer; env: Record<string, string | undefined>; cwd: string };
  tools: McpToolInfo[];
  prompts: McpPromptInfo[];
}

const pairs = (v: Array<{ name: string; value: string }> | Record<string, string>): Record<string, string> =>
  Array.isArray(v) ? Object.fromEntries(v.map((e) => [e.name, e.value])) : { ...v };

/**
 * A server's structured output is not checked against the output schema it declared. The SDK's
 * check compiles that schema with Ajv and runs its `pattern`s, the server's own regexes, over the
 * server's own output on the daemon's event loop: `^(a+)+$` against forty a's and a "!" holds it
 * for hours. The check would protect nothing here: the model reads the result as text, and
 * structured content only as its JSON.
 */
const acceptOutput: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** Tool names the model sees: letters, digits, `_` and `-` only, as providers require. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

/** The values a server was given (its environment, its headers): its errors are shown and recorded without them. */
function secretsOf(spec: McpServer): string[] {
  const given = "headers" in spec ? spec.headers : "env" in spec ? spec.env : [];
  return Object.values(pairs(given as Array<{ name: string; value: string }> | Record<string, string>));
}

/** `err` for the log with those values blanked in its message and stack, its causes' too. */
function withoutSecrets(err: unknown, secrets: readonly string[], depth = 0): Error {
  const e = err instanceof Error ? err : new Error(String(err));
  const out = new Error(redact(e.message, secrets));
  out.stack = redact(e.stack ?? out.message, secrets);
  if (e.cause !== undefined && depth < 5) out.cause = withoutSecrets(e.cause, secrets, depth + 1);
  return out;
}

/** What the user is told of servers, once per change (McpHub.news). */
export interface McpNews {
  lines: string[];
  /** A server answered after the first turn's wait: its tools join the list now. */
  joined: boolean;
}

export class McpHub {
  private readonly servers = new Map<string, ServerState>();
  private readyPromise: Promise<void> = Promise.resolve();
  /** The status of each server the user last heard of (news()). */
  private readonly heard = new Map<string, ServerState["status"]>();

  constructor(
    private readonly log: Logger,
    /** Relays a server's question (MCP elicitation) to the user; without it every question is declined. */
    private readonly interact?: (request: InteractionRequest, signal: AbortSignal) => Promise<InteractionResult>,
  ) {}

  get configured(): boolean {
    return this.servers.size > 0;
  }

  /** Starts connecting every server; `ready()` resolves when all have connected or failed. */
  start(list: McpServer[], env: Record<string, string | undefined>, cwd: string): void {
    const jobs: Promise<void>[] = [];
    for (const spec of list) {
      if (this.servers.has(spec.name)) continue;
      const state: ServerState = {
        name: spec.name,
        transport: "type" in spec ? (spec.type as "http" | "sse") : "stdio",
        status: "connecting",
        tools: [],
        prompts: [],
        origin: { spec, env, cwd },
      };
      this.servers.set(spec.name, state);
      jobs.push(this.connect(state, spec, env, cwd));
    }
    this.readyPromise = Promise.all([this.readyPromise, ...jobs]).then(() => undefined);
  }

  /** Waits for the servers, but never longer than `timeoutMs`: a slow server joins late or not at all. */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.readyPromise, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }

  private async connect(state: ServerState, spec: McpServer, env: Record<string, string | undefined>, cwd: string): Promise<void> {
    try {
      const { Client, ElicitRequestSchema, SSEClientTransport, StdioClientTransport, StreamableHTTPClientTransport } = await import("./sdk.js");
      // Servers may ask the user something; the session relays it to the editor, or declines at once.
      const client = new Client(
        { name: "reasonix", version: "0.1.0" },
        { capabilities: { elicitation: { form: {}, url: {} } }, jsonSchemaValidator: acceptOutput },
      );
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        const p = request.params as { mode?: string; message: string; requestedSchema?: Record<string, unknown>; url?: string; elicitationId?: string };
        const ask: InteractionRequest = {
          server: state.name,
          mode: p.mode === "url" ? "url" : "form",
          message: p.message,
          ...(p.requestedSchema ? { requestedSchema: p.requestedSchema } : {}),
          ...(p.url ? { url: p.url } : {}),
          ...(p.elicitationId ? { elicitationId: p.elicitationId } : {}),
        };
        if (!this.interact) return { action: "decline" };
        return this.interact(ask, extra.signal).catch((err: unknown) => {
          this.log.warn({ server: state.name, err }, "MCP elicitation failed; cancelled");
          return { action: "cancel" as const };
        });
      });
      if ("type" in spec && (spec.type === "http" || spec.type === "sse")) {
        const headers = pairs(spec.headers as Array<{ name: string; value: string }> | Record<string, string>);
        const url = new URL(spec.url as string);
        if (spec.type === "http") {
          await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
        } else {
          await client.connect(new SSEClientTransport(url, { requestInit: { headers } }));
        }
      } else {
        const stdio = spec as { command: string; args: string[]; env: Array<{ name: string; value: string }> | Record<string, string> };
        const base = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"));
        const transport = new StdioClientTransport({ command: stdio.command, args: stdio.args, env: { ...base, ...pairs(stdio.env) }, cwd, stderr: "pipe" });
        state.closeTransport = () => transport.close();
        if (state.status === "closed") return;
        let stderrTail = "";
        transport.stderr?.on("data", (c: Buffer) => (stderrTail = (stderrTail + c.toString()).slice(-2000)));
        transport.onclose = () => {
          if (state.status === "connected") {
            state.status = "failed";
            state.crashed = true;
            state.error = oneSentence(redact(`the server exited${stderrTail ? `: ${stderrTail.trim().split("\n").at(-1)}` : ""}`, secretsOf(spec)));
            this.log.warn({ server: state.name, error: state.error }, "MCP server exited; it restarts at the next prompt");
          }
        };
        const connecting = client.connect(transport);
        // connect() spawns at once: the process exists from here, whether or not it ever answers.
        if (transport.pid !== null) state.pid = transport.pid;
        await connecting.catch((err: unknown) => {
          throw new Error(`${errorText(err)}${stderrTail ? ` (${stderrTail.trim().split("\n").at(-1)})` : ""}`, { cause: err });
        });
      }
      state.client = client;
      const caps = client.getServerCapabilities();
      if (caps?.tools) {
        const { tools } = await client.listTools();
        state.tools = tools.map((t) => ({
          server: state.name,
          name: t.name,
          description: t.description ?? `${t.name} (MCP server ${state.name})`,
          inputSchema: (t.inputSchema as Record<string, unknown>) ?? { type: "object" },
          readOnly: t.annotations?.readOnlyHint === true,
        }));
      }
      if (caps?.prompts) {
        const { prompts } = await client.listPrompts();
        state.prompts = prompts.map((p) => ({
          server: state.name,
          name: p.name,
          description: p.description ?? `MCP prompt ${p.name}`,
          args: (p.arguments ?? []).map((a) => a.name),
        }));
      }
      state.status = "connected";
      this.log.info({ server: state.name, tools: state.tools.length, prompts: state.prompts.length }, "MCP server connected");
    } catch (err) {
      state.status = "failed";
      // fetch's own message is "fetch failed": the cause (ECONNREFUSED, a name not found) is the news.
      const text = errorText(err).split("\n")[0] ?? "";
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
      // Its stderr's last line is in it: a server may print what it was given, or a page of text.
      state.error = oneSentence(redact(cause && !text.includes(cause) ? `${text} (${cause})` : text, secretsOf(spec)));
      this.log.warn({ server: state.name, err: withoutSecrets(err, secretsOf(spec)) }, "MCP server failed to connect");
    }
  }

  /** Servers that exited after connecting are started again (once per call); the rest are left be. */
  async restartCrashed(): Promise<void> {
    const crashed = [...this.servers.values()].filter((s) => s.crashed && s.origin);
    await Promise.all(
      crashed.map(async (s) => {
        s.crashed = false;
        s.status = "connecting";
        const why = s.error;
        delete s.client;
        delete s.pid;
        delete s.error;
        this.log.info({ server: s.name }, "restarting an MCP server that exited");
        await this.connect(s, s.origin!.spec, s.origin!.env, s.origin!.cwd);
        if ((s.status as ServerState["status"]) === "connected") s.restartedAfter = why ?? "it exited";
      }),
    );
  }

  /**
   * What the user has not heard yet, a line each: a server that could not start or stopped for good
   * (with its error), one that had not answered within the first turn's wait of `waitedMs`, one of
   * those that answered since, and one that had exited and was started again (with why it exited).
   * A server that simply connected says nothing.
   */
  news(waitedMs: number): McpNews {
    const news: McpNews = { lines: [], joined: false };
    for (const s of this.servers.values()) {
      const before = this.heard.get(s.name);
      if (s.restartedAfter !== undefined && s.status === "connected") {
        news.lines.push(`MCP server ${JSON.stringify(s.name)} had stopped (${s.restartedAfter}) and was started again.`);
        delete s.restartedAfter;
      }
      if (s.status === before || s.status === "closed") continue;
      this.heard.set(s.name, s.status);
      const name = JSON.stringify(s.name);
      if (s.status === "failed") {
        const how = before === "connected" ? "stopped and did not start again" : "could not start";
        news.lines.push(`MCP server ${name} ${how}: ${s.error ?? "no reason given"}. Its tools are not offered; /mcp lists the servers.`);
      } else if (s.status === "connecting") {
        news.lines.push(`MCP server ${name} has not answered in ${Math.round(waitedMs / 1000)} s; its tools join the turn after it does.`);
      } else if (before === "connecting") {
        news.joined = true;
        const tools = s.tools.length === 1 ? "its one tool is" : `its ${s.tools.length} tools are`;
        news.lines.push(`MCP server ${name} answered; ${tools} offered from this turn on.`);
      }
    }
    return news;
  }

  tools(): McpToolInfo[] {
    return [...this.servers.values()].filter((s) => s.status === "connected").flatMap((s) => s.tools);
  }

  prompts(): McpPromptInfo[] {
    return [...this.servers.values()].filter((s) => s.status === "connected").flatMap((s) => s.prompts);
  }

  status(): Array<{ name: string; transport: string; status: string; tools: number; prompts: number; error?: string }> {
    return [...this.servers.values()].map((s) => ({
      name: s.name,
      transport: s.transport,
      status: s.status,
      tools: s.tools.length,
      prompts: s.prompts.length,
      ...(s.error ? { error: s.error } : {}),
    }));
  }

  private live(server: string): Client {
    const s = this.servers.get(server);
    if (s?.status !== "connected" || !s.client) throw new Error(`MCP server "${server}" is not connected${s?.error ? `: ${s.error}` : ""}`);
    return s.client;
  }

  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ text: string; isError: boolean; content: unknown[] }> {
    const result = await this.live(server).callTool({ name: tool, arguments: args }, undefined, { signal, timeout: 300_000 });
    const content = (result.content as unknown[] | undefined) ?? [];
    const text = content
      .map((c) => {
        const block = c as { type: string; text?: string; resource?: { uri?: string; text?: string }; mimeType?: string; uri?: string };
        if (block.type === "text") return block.text ?? "";
        if (block.type === "resource") return block.resource?.text ?? `[resource ${block.resource?.uri ?? ""}]`;
        if (block.type === "resource_link") return `[${block.uri ?? "resource"}]`;
        return `[${block.type}${block.mimeType ? ` ${block.mimeType}` : ""} omitted]`;
      })
      .join("\n");
    return { text: text || (result.structuredContent ? JSON.stringify(result.structuredContent) : "(no output)"), isError: result.isError === true, content };
  }

  async promptText(server: string, prompt: string, args: Record<string, string>): Promise<string> {
    const result = await this.live(server).getPrompt({ name: prompt, arguments: args });
    return result.messages
      .map((m) =>
        m.content.type === "text"
          ? m.content.text
          : m.content.type === "resource" && "text" in m.content.resource
            ? String(m.content.resource.text)
            : `[${m.content.type} omitted]`,
      )
      .join("\n\n");
  }

  /**
   * Ends every server, including ones still in their handshake: the client (or the bare transport)
   * is closed, then whatever is left of a stdio server's process tree gets SIGTERM, then SIGKILL.
   */
  async close(graceMs = 2000): Promise<void> {
    await Promise.all(
      [...this.servers.values()].map(async (s) => {
        s.status = "closed";
        // The tree is read before anything ends, so children the server started are found too.
        const tree = s.pid !== undefined ? processTree(s.pid) : [];
        const closing = (s.client ? s.client.close() : s.closeTransport?.())?.catch(() => undefined);
        if (tree.length > 0) await endTree(tree, graceMs);
        else await Promise.race([closing, new Promise((r) => setTimeout(r, graceMs).unref())]);
      }),
    );
  }
}
