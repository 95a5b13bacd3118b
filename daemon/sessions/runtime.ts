/**
 * A session's runtime: its slash commands, installed plugins and MCP servers, and the tool list they
 * settle. Built once when the session goes live (leniently: a broken plugin is skipped and logged)
 * and rebuilt only by reloadExtensions, atomically: a broken manifest keeps the previous runtime.
 */
import { join } from "node:path";
import type { AvailableCommand } from "@agentclientprotocol/sdk";
import { RpcError } from "../../shared/jsonrpc.js";
import type { McpServer } from "../../shared/acp-schemas.js";
import type { Logger } from "../log/log.js";
import { CommandSet, commandDirs, type Resolved } from "../commands/registry.js";
import { loadPlugins, type Plugin } from "../plugins/manifest.js";
import { pluginCommands } from "../plugins/actions.js";
import { McpHub } from "../mcp/hub.js";
import { projectBounds } from "../agent/project-instructions.js";
import type { InteractionRequest, InteractionResult } from "../mcp/interaction.js";
import { mcpTools } from "../mcp/tools.js";
import type { SessionTools } from "./session-tools.js";
import type { ClientPort } from "./types.js";
import { errorText } from "../../shared/error-text.js";

export interface RuntimeHost {
  sessionId: string;
  cwd: string;
  additionalDirectories: readonly string[];
  configDir: string;
  log: Logger;
  env(): Record<string, string | undefined>;
  attachments(): Iterable<ClientPort>;
  tools: SessionTools;
  /** An MCP server's question for the user (elicitation). */
  interact(request: InteractionRequest, signal: AbortSignal): Promise<InteractionResult>;
  /** Something the user hears when the session goes live (sessions/notices.ts). */
  notice(text: string): void;
  /** How long the first turn waits for MCP servers still starting (the daemon's mcpStartSeconds). */
  mcpWaitMs(): number;
}

export class SessionRuntime {
  private commands: CommandSet | undefined;
  private pluginList: Plugin[] | undefined;
  private hub: McpHub;
  private mcpSpecs: McpServer[] = [];
  private toolsSettled = false;
  private bounds: Promise<readonly string[]> | undefined;
  private pluginsSkipped: readonly string[] = [];
  private skippedNow: readonly string[] = [];

  constructor(private readonly host: RuntimeHost) {
    this.hub = this.newHub();
  }

  get mcp(): McpHub {
    return this.hub;
  }

  get plugins(): readonly Plugin[] {
    return this.pluginList ?? [];
  }

  private newHub(): McpHub {
    return new McpHub(this.host.log.child({ component: "mcp" }), (request, signal) => this.host.interact(request, signal));
  }

  private processEnv(): Record<string, string | undefined> {
    return this.host.env();
  }

  /** The client's MCP servers; connected once, in the background. */
  connectMcp(servers: McpServer[]): void {
    if (servers.length === 0 || this.hub.configured) return;
    this.mcpSpecs = servers;
    this.hub.start(servers, this.processEnv(), this.host.cwd);
    // Their prompts join the slash menu as soon as the servers answer, before any turn.
    void this.hub
      .ready(this.host.mcpWaitMs())
      .then(() => this.refreshCommands())
      .catch(() => undefined);
  }

  /**
   * Before each turn's model requests: the first waits (briefly) for the MCP servers and fixes the
   * tool list. From then on every request repeats the same tools (the provider's cached prefix
   * holds), until a reload or a server that had not answered in that wait answers: it joins the
   * next turn, since a session that never got its tools would be worse than one cache miss.
   * Returns what the user has not heard yet of the servers (a failure with its cause, a late one).
   */
  async settleTools(): Promise<string[]> {
    // A server that exited mid-session comes back for the next turn; its tools keep their names.
    await this.hub.restartCrashed();
    if (!this.hub.configured) {
      this.toolsSettled = true;
      return [];
    }
    const waitMs = this.host.mcpWaitMs();
    if (!this.toolsSettled) await this.hub.ready(waitMs);
    const news = this.hub.news(waitMs);
    if (!this.toolsSettled || news.joined) {
      this.host.tools.setExtra(mcpTools(this.hub));
      await this.refreshCommands();
    }
    this.toolsSettled = true;
    return news.lines;
  }

  /** Plugins, command folders and command files the last load left out because they link outside. */
  get skipped(): readonly string[] {
    return this.skippedNow;
  }

  /** The real folders the project's command files may lie in, found once. */
  private commandDirs(): Promise<ReturnType<typeof commandDirs>> {
    this.bounds ??= projectBounds(this.host.cwd, this.host.additionalDirectories);
    return this.bounds.then((bounds) => commandDirs(this.host.configDir, this.host.cwd, bounds));
  }

  /** The first load's skipped links are said to the user; later loads log a change (they run at every prompt). */
  private noteSkipped(skipped: readonly string[], first: boolean): void {
    if (first) for (const s of skipped) this.host.notice(s);
    if (first ? skipped.length > 0 : JSON.stringify(skipped) !== JSON.stringify(this.skippedNow)) this.host.log.warn({ skipped }, "links outside skipped");
    this.skippedNow = skipped;
  }

  /** Reloads the custom commands (cheap, on every prompt); when the set changed, every window hears. */
  async refreshCommands(): Promise<void> {
    if (!this.pluginList) {
      const { plugins, errors, skipped } = await loadPlugins(join(this.host.configDir, "plugins"), { strict: false });
      for (const e of errors) this.host.log.warn({ error: e }, "plugin skipped");
      this.pluginList = plugins;
      this.pluginsSkipped = skipped;
    }
    const next = await CommandSet.load(await this.commandDirs(), pluginCommands(this.pluginList), this.hub.prompts());
    const first = this.commands === undefined;
    const changed = !first && !next.sameAs(this.commands);
    this.commands = next;
    this.noteSkipped([...this.pluginsSkipped, ...next.skipped], first);
    if (changed) for (const port of this.host.attachments()) this.sendCommands(port);
  }

  available(): AvailableCommand[] {
    return this.commands?.available() ?? [];
  }

  resolve(text: string): Resolved {
    return this.commands?.resolve(text) ?? { kind: "none" };
  }

  sendCommands(port: ClientPort): void {
    if (!port.closed && this.commands)
      port.sendUpdate(this.host.sessionId, { sessionUpdate: "available_commands_update", availableCommands: this.commands.available() });
  }

  /** Rebuilds plugins, MCP servers and commands, and swaps them in only when all of it loaded. */
  async reload(): Promise<void> {
    let plugins: Plugin[];
    let pluginsSkipped: string[];
    try {
      ({ plugins, skipped: pluginsSkipped } = await loadPlugins(join(this.host.configDir, "plugins"), { strict: true }));
    } catch (err) {
      throw RpcError.internal(`Reload failed, the previous extensions stay active: ${errorText(err)}`);
    }
    // MCP servers restart too; their tools join the list now, the one time it may change.
    await this.hub.close();
    this.hub = this.newHub();
    if (this.mcpSpecs.length > 0) {
      this.hub.start(this.mcpSpecs, this.processEnv(), this.host.cwd);
      await this.hub.ready(this.host.mcpWaitMs());
    }
    this.host.tools.setExtra(mcpTools(this.hub));
    this.toolsSettled = true;
    this.commands = await CommandSet.load(await this.commandDirs(), pluginCommands(plugins), this.hub.prompts());
    this.pluginList = plugins;
    this.pluginsSkipped = pluginsSkipped;
    // Named in the reload's own answer (Session.reloadRuntime).
    this.skippedNow = [...pluginsSkipped, ...this.commands.skipped];
    for (const port of this.host.attachments()) this.sendCommands(port);
  }

  mcpStatusLines(): string[] {
    return this.hub
      .status()
      .map(
        (s) =>
          `${s.name} (${s.transport}): ${s.status}${s.status === "connected" ? `, ${s.tools} tools, ${s.prompts} prompts` : ""}${s.error ? ` — ${s.error}` : ""}`,
      );
  }

  close(): Promise<void> {
    return this.hub.close();
  }
}
