/**
 * Local commands of a session: the built-in slash commands' view of it (CommandHost) and plugin
 * actions. They answer without the model, as a turn of their own.
 */
import { RpcError } from "../../shared/jsonrpc.js";
import type { CommandHost } from "../commands/builtin.js";
import { runAction } from "../plugins/actions.js";
import { listModels } from "../provider/registry.js";
import type { TurnInput, TurnRunner } from "../agent/turn-runner.js";
import type { ContentBlock } from "../../shared/acp-schemas.js";
import { promptToText } from "./prompt-text.js";
import { sessionUmask } from "./environment.js";
import type { SessionDeps } from "./deps.js";
import type { SessionRuntime } from "./runtime.js";
import type { SessionTools } from "./session-tools.js";
import { setModel, type SettingsHost } from "./settings.js";
import type { SurfaceEmitter } from "../windows/surfaces.js";
import type { ClientPort, SessionUpdate } from "./types.js";
import type { JobTable } from "../tools/jobs.js";
import type { Checkpoints } from "../records/checkpoints.js";
import type { TaskTranscripts } from "../records/task-transcripts.js";
import { errorText } from "../../shared/error-text.js";
import { discoverSkills } from "../agent/skills.js";

export interface CommandHostParts {
  /** What a command asks of the session itself. */
  session: {
    takeEnvironment(port: ClientPort): Promise<string[]>;
    reloadRuntime(): Promise<string>;
    /** The model for the session as it is now (throws when no key is configured). */
    model(): unknown;
  };
  settings: SettingsHost;
  broker: { readonly pending: ReadonlyMap<unknown, unknown> };
  runtime: SessionRuntime;
  tools: SessionTools;
  deps: SessionDeps;
  surfaces: SurfaceEmitter;
  turns: TurnRunner<ClientPort>;
  jobs: JobTable;
  checkpoints: Checkpoints;
  transcripts: TaskTranscripts;
}

/** A local command's answer: an agent message marked as a command result, recorded like any turn. */
export function commandAnswer(text: string): SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { "reasonix.io": { kind: "command" } } };
}

export function commandHost(parts: CommandHostParts, origin: ClientPort | undefined, signal: AbortSignal = new AbortController().signal): CommandHost {
  const { session, settings, runtime, tools, deps, checkpoints } = parts;
  const record = settings.record;
  // Restores go through the editor's buffers like the tools' writes; each request has its own bound.
  const files = () => tools.restoreFiles(new AbortController().signal);
  return {
    jobs: () => parts.jobs.list(),
    sandbox: () => parts.tools.sandboxSummary(),
    undo: (force) => checkpoints.undo(files(), force),
    redo: (force) => checkpoints.redo(files(), force),
    checkpoints: () => checkpoints.list(),
    tasks: (args) => parts.transcripts.show(args),
    skills: () => discoverSkills(record, deps.configDir),
    record,
    queuedPrompts: parts.turns.queued,
    pendingPermissions: parts.broker.pending.size,
    mcpServers: runtime.mcpStatusLines(),
    grants: tools.memory.grants(),
    models: () => listModels(deps.config()).map((m) => m.ref),
    setModel: async (ref) => {
      await setModel(settings, ref, undefined);
      return record.model;
    },
    listSessions: () => deps.listSessions(record.cwd),
    commands: () => runtime.available(),
    environmentNames: () => Object.keys(record.environment ?? {}).sort(),
    reloadEnvironment: () => {
      if (!origin) throw RpcError.invalidRequest("no window to take an environment from");
      return session.takeEnvironment(origin);
    },
    reload: () => session.reloadRuntime(),
    compact: async (focus) => {
      // "/compact focus on the parser" and "/compact the parser" ask the same.
      const r = await parts.turns.compactNow(focus.replace(/^focus\s+(on\s+)?/i, "") || undefined, signal);
      const size = parts.turns.context().size;
      const n = (v: number): string => v.toLocaleString("en-US");
      switch (r.kind) {
        case "none":
          return "Nothing to compact yet: the conversation is short enough to keep whole.";
        case "cancelled":
          return "Compaction cancelled; the conversation is as it was.";
        case "compacted":
          return `Context: about ${n(r.before)} → ${n(r.after)} tokens of ${n(size)}. \`/summary\` shows the summary; the editor keeps the full history.`;
        default:
          return `Context: about ${n(r.before)} → ${n(r.after)} tokens of ${n(size)}, by trimming older tool outputs.`;
      }
    },
    context: () => parts.turns.context(),
  };
}

/**
 * What a prompt becomes: a built-in command answered locally, a plugin action, or text for the
 * model (a custom command's expansion, an MCP prompt's text, or the prompt as typed).
 */
export async function turnInputFor(
  parts: CommandHostParts,
  blocks: ContentBlock[],
  origin: ClientPort | undefined,
  messageId?: string,
): Promise<TurnInput<ClientPort> & { shownText: string }> {
  const { session, runtime } = parts;
  const text = promptToText(blocks);
  if (text.length === 0) throw RpcError.invalidParams("prompt is empty");
  await runtime.refreshCommands();
  const resolved = runtime.resolve(text);
  const shown = { origin, shown: blocks, shownText: text, ...(messageId ? { messageId } : {}) };
  if (resolved.kind === "local") {
    return {
      ...shown,
      local: async (signal) => parts.turns.emitForTurn(commandAnswer(await resolved.command.run(resolved.args, commandHost(parts, origin, signal)))),
    };
  }
  if (resolved.kind === "plugin") return { ...shown, local: (signal) => runPluginAction(parts, resolved.name, resolved.args, signal) };
  // Fail before anything is recorded when no key is configured: the client can run setup.
  session.model();
  if (resolved.kind === "template") return { ...shown, modelText: resolved.text };
  if (resolved.kind !== "mcp") return { ...shown, modelText: text };
  try {
    return { ...shown, modelText: await runtime.mcp.promptText(resolved.server, resolved.prompt, resolved.args) };
  } catch (err) {
    throw RpcError.internal(`The MCP prompt /${resolved.server}:${resolved.prompt} failed: ${errorText(err)}`);
  }
}

export async function runPluginAction(parts: CommandHostParts, name: string, args: string, signal: AbortSignal): Promise<void> {
  const { settings, runtime, surfaces, turns } = parts;
  const result = await runAction(runtime.plugins, name, args, {
    env: { ...(settings.record.environment ?? {}) },
    umask: sessionUmask(settings.record),
    signal,
    sandbox: (dir) => parts.tools.sandboxNow([dir]),
  });
  if (!result) {
    turns.emitForTurn(commandAnswer(`No plugin action named ${name}.`));
    return;
  }
  if (result.kind === "prompt") {
    turns.emitForTurn(commandAnswer(result.text));
    return;
  }
  await surfaces.show(result.surface, signal, turns.origin);
}
