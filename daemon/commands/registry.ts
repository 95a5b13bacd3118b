/**
 * The slash commands of one session: built-ins first, then custom commands from the user's and the
 * project's folders. A prompt that starts with a known command runs it; an unknown `/x` is left for
 * the model as typed.
 */
import { join } from "node:path";
import type { AvailableCommand } from "@agentclientprotocol/sdk";
import { BUILTIN_COMMANDS, type BuiltinCommand } from "./builtin.js";
import { MODEL_COMMANDS } from "./init.js";
import { type CommandDir, expandTemplate, loadCustomCommands, parseSlash, splitArgs, type CustomCommand } from "./custom.js";
import { CONFIG_BOUNDARY, PROJECT_BOUNDARY } from "../tools/read-head.js";
import { resolveReal } from "../tools/workspace.js";
import type { McpPromptInfo } from "../mcp/hub.js";

/**
 * A plugin action as a slash command (`/<plugin>:<action>`). Plugins build these; the registry only
 * lists and resolves them, so commands/ never imports plugins/.
 */
export interface PluginCommand {
  name: string;
  description: string;
  hint?: string;
  /** A prompt action's template: it expands to the model instead of running anything. */
  prompt?: string;
}

export type Resolved =
  | { kind: "local"; command: BuiltinCommand; args: string }
  | { kind: "template"; name: string; text: string }
  | { kind: "plugin"; name: string; args: string }
  | { kind: "mcp"; server: string; prompt: string; args: Record<string, string> }
  | { kind: "none" };

/**
 * The user's folder, then the project's. `projectBounds` are the real folders the project's files
 * may lie in (the repository root and the session's folders); the user's must stay in the config folder.
 */
export function commandDirs(configDir: string, cwd: string, projectBounds: readonly string[]): CommandDir[] {
  return [
    { dir: join(configDir, "commands"), base: configDir, inside: [resolveReal("/", configDir)], boundary: CONFIG_BOUNDARY },
    { dir: join(cwd, ".reasonix", "commands"), base: cwd, inside: projectBounds, boundary: PROJECT_BOUNDARY },
  ];
}

export class CommandSet {
  private constructor(
    private readonly custom: CustomCommand[],
    private readonly plugins: readonly PluginCommand[],
    private readonly prompts: readonly McpPromptInfo[],
    /** Command folders and files left out because they link outside, one line each. */
    readonly skipped: readonly string[],
  ) {}

  static async load(dirs: readonly CommandDir[], plugins: readonly PluginCommand[], prompts: readonly McpPromptInfo[] = []): Promise<CommandSet> {
    const reserved = [...BUILTIN_COMMANDS, ...MODEL_COMMANDS].map((b) => b.name);
    const loaded = await loadCustomCommands(dirs);
    return new CommandSet(
      loaded.commands.filter((c) => !reserved.includes(c.name)),
      plugins,
      prompts,
      loaded.skipped,
    );
  }

  available(): AvailableCommand[] {
    return [
      ...[...BUILTIN_COMMANDS, ...MODEL_COMMANDS].map((c) => ({ name: c.name, description: c.description, ...(c.hint ? { input: { hint: c.hint } } : {}) })),
      ...this.custom.map((c) => ({ name: c.name, description: c.description, ...(c.hint ? { input: { hint: c.hint } } : {}) })),
      ...this.plugins
        .filter((p) => !this.custom.some((c) => c.name === p.name))
        .map((p) => ({ name: p.name, description: p.description, ...(p.hint ? { input: { hint: p.hint } } : {}) })),
      ...this.prompts.map((p) => ({
        name: `${p.server}:${p.name}`,
        description: p.description,
        ...(p.args.length ? { input: { hint: p.args.map((a) => `<${a}>`).join(" ") } } : {}),
      })),
    ];
  }

  /** Same list, same order: hosts rebuild their menu only when this changes. */
  sameAs(other: CommandSet | undefined): boolean {
    return (
      other !== undefined &&
      JSON.stringify(other.available()) === JSON.stringify(this.available()) &&
      JSON.stringify(other.custom.map((c) => c.body)) === JSON.stringify(this.custom.map((c) => c.body))
    );
  }

  resolve(text: string): Resolved {
    const slash = parseSlash(text);
    if (!slash) return { kind: "none" };
    const builtin = BUILTIN_COMMANDS.find((c) => c.name === slash.name);
    if (builtin) return { kind: "local", command: builtin, args: slash.args };
    const forModel = MODEL_COMMANDS.find((c) => c.name === slash.name);
    if (forModel) return { kind: "template", name: forModel.name, text: forModel.prompt(slash.args) };
    const custom = this.custom.find((c) => c.name === slash.name);
    if (custom) return { kind: "template", name: custom.name, text: expandTemplate(custom.body, slash.args) };
    const [pluginName, actionName] = slash.name.split(":");
    const action = this.plugins.find((p) => p.name === slash.name);
    if (action?.prompt !== undefined) return { kind: "template", name: slash.name, text: expandTemplate(action.prompt, slash.args) };
    if (action) return { kind: "plugin", name: slash.name, args: slash.args };
    const prompt = this.prompts.find((p) => p.server === pluginName && p.name === actionName);
    if (prompt) {
      // Positional words fill the prompt's arguments in order; the last one takes the rest.
      const words = splitArgs(slash.args);
      const args: Record<string, string> = {};
      prompt.args.forEach((name, i) => {
        const value = i === prompt.args.length - 1 ? words.slice(i).join(" ") : words[i];
        if (value) args[name] = value;
      });
      return { kind: "mcp", server: prompt.server, prompt: prompt.name, args };
    }
    return { kind: "none" };
  }
}
