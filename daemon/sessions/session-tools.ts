/**
 * The tool side of a session: its fixed tool list, its permission memory, and the contexts that
 * route files and commands to the right editor window or to the local machine.
 */
import type { PermissionOption } from "@agentclientprotocol/sdk";
import { builtinTools } from "../tools/builtin/index.js";
import { localCommands } from "../tools/local-commands.js";
import { localFiles } from "../tools/local-files.js";
import { FileSnapshots } from "../tools/file-snapshots.js";
import { routedCommands } from "../tools/editor-commands.js";
import { routedFiles } from "../tools/editor-files.js";
import { ApprovalMemory, isPreset, type Preset } from "../tools/permissions.js";
import { runToolCall, type RunnerHost, type ToolCallRequest, type ToolHooks } from "../tools/runner.js";
import { realRoots } from "../tools/workspace.js";
import type { DaemonTools, FileAccess, PlanEntry, SkillLibrary, SubagentRunner, Tool, ToolControls } from "../tools/types.js";
import type { JobTable } from "../tools/jobs.js";
import type { Sandbox, SessionSandbox } from "../tools/sandbox.js";
import type { ToolSpec } from "../provider/types.js";
import type { WriteTicket } from "../records/checkpoints.js";
import type { EditorRouter } from "../windows/editor-router.js";
import type { PermissionBroker } from "../windows/permission-broker.js";
import type { SessionRecord, SessionUpdate } from "./types.js";
import { sessionUmask } from "./environment.js";

export interface SessionToolsHost {
  record: Readonly<SessionRecord>;
  env(): Record<string, string | undefined>;
  emit(update: SessionUpdate): void;
  router: EditorRouter;
  broker: PermissionBroker;
  recordDecision(toolCallId: string, outcome: string): Promise<void>;
  controls: ToolControls;
  /** config.json's `webFetch.allowPrivateNetwork`, read per call (the daemon re-reads the file). */
  allowPrivateNetwork(): boolean;
  /** The daemon's editor bound and search threads. */
  daemonTools: DaemonTools;
  jobs: JobTable;
  /** The session's Agent Skills, for the skill tool. */
  skills: SkillLibrary;
  /** Where the session's commands run confined (tools/sandbox.ts). */
  sandbox: SessionSandbox;
  /** Before a tool writes a file: the checkpoint saves what it held (`read`: as the tools see it); the ticket hears how the write went. */
  beforeWrite(path: string, read: () => Promise<{ text: string; encoding: string }>): Promise<WriteTicket>;
  /** The task tool's child agent, over this call's runner (the parent's gate and grants). */
  subagent(runner: RunnerHost, toolCallId: string): SubagentRunner;
  /** Before a call that changes the world: waits for a window when none is attached (agent/window-hold.ts). */
  beforeChange(title: string, signal: AbortSignal): Promise<boolean>;
  /** PreToolUse and PostToolUse (hooks/session-hooks.ts). */
  hooks?: ToolHooks;
}

/**
 * One spec per tool, shared by every session that has the tool (the built-ins are module constants):
 * frozen, since a request is built from it; the context estimate keeps each spec's size.
 */
const specs = new WeakMap<Tool, ToolSpec>();
function specOf(t: Tool): ToolSpec {
  let spec = specs.get(t);
  if (!spec) {
    spec = Object.freeze({ type: "function", function: Object.freeze({ name: t.name, description: t.description, parameters: t.parameters }) });
    specs.set(t, spec);
  }
  return spec;
}

interface ToolSet {
  tools: ReadonlyMap<string, Tool>;
  specs: ToolSpec[];
}

function toolSet(list: Tool[]): ToolSet {
  return {
    tools: new Map(list.map((t) => [t.name, t])),
    specs: list.map(specOf),
  };
}

/** Every session without MCP tools has the same list: one copy, not one per session (nothing changes it). */
let builtinSet: ToolSet | undefined;

export class SessionTools {
  /** What the model last read of each file, for the stale check; the session's, in memory only. */
  readonly snapshots = new FileSnapshots();
  /** Fixed for the session: the provider's prefix cache depends on a stable tool list. */
  private tools: ReadonlyMap<string, Tool> = new Map();
  private specs: ToolSpec[] = [];

  constructor(
    private readonly host: SessionToolsHost,
    /** The session's "always" answers (memory only: a restart forgets them); the status shows them. */
    readonly memory = new ApprovalMemory(),
  ) {
    this.setExtra([]);
  }

  /** Built-ins first, then the MCP servers' tools; set before the first turn and on a reload only. */
  setExtra(extra: Tool[]): void {
    const set = extra.length === 0 ? (builtinSet ??= toolSet(builtinTools())) : toolSet([...builtinTools(), ...extra]);
    this.tools = set.tools;
    this.specs = set.specs;
  }

  toolSpecs(): ToolSpec[] {
    return this.specs;
  }

  /** Files as the tools reach them (the editor's buffers when it offers fs), for /undo and /redo. */
  restoreFiles(signal: AbortSignal): FileAccess {
    const { host } = this;
    return routedFiles(host.record.id, (cap) => host.router.pick(cap), localFiles(sessionUmask(host.record)), signal, host.daemonTools.editorTimeoutMs());
  }

  /** Where a command of this session would run now (plugin actions add their own folder as readable). */
  sandboxNow(readable: readonly string[] = []): Promise<Sandbox | undefined> {
    const record = this.host.record;
    return this.host.sandbox.plan(this.preset(), realRoots(record.cwd, record.additionalDirectories), readable);
  }

  /** The session stops: its private /tmp goes (its commands and jobs have ended). */
  dispose(): void {
    this.host.sandbox.dispose();
  }

  /** The sandbox in words for /status, or why commands run without one. */
  async sandboxSummary(): Promise<string> {
    if (this.preset() === "danger-full-access") return "unconfined (danger-full-access runs them as they are)";
    const sandbox = await this.sandboxNow();
    if (sandbox) return `in a ${sandbox.describe()}`;
    const status = await this.host.sandbox.status();
    return `unconfined, NO SANDBOX: ${status.available ? "unavailable" : status.reason}. They ask and are granted as before.`;
  }

  private preset(): Preset {
    return isPreset(this.host.record.toolApproval) ? (this.host.record.toolApproval as Preset) : "workspace-write";
  }

  async run(call: ToolCallRequest, signal: AbortSignal): Promise<string> {
    const { host } = this;
    const record = host.record;
    const roots = realRoots(record.cwd, record.additionalDirectories);
    const cwd = roots[0]!;
    const sandbox = await host.sandbox.plan(this.preset(), roots);
    const pick = (cap: "readTextFile" | "writeTextFile" | "terminal") => host.router.pick(cap);
    const checkpointed = (files: FileAccess): FileAccess => ({
      ...files,
      write: async (path, text, encoding) => {
        const ticket = await host.beforeWrite(path, () => files.read(path));
        try {
          await files.write(path, text, encoding);
        } catch (err) {
          // Nothing was written (the editor refused it, say): no checkpoint entry may claim it was.
          ticket.failed();
          throw err;
        }
        ticket.wrote(text);
      },
    });
    const runner: RunnerHost = {
      emit: (u) => host.emit(u),
      tools: this.tools,
      preset: () => this.preset(),
      mode: () => record.mode,
      memory: this.memory,
      roots,
      cwd,
      sandbox,
      beforeChange: (title, sig) => host.beforeChange(title, sig),
      ...(host.hooks ? { hooks: host.hooks } : {}),
      askPermission: async (toolCall, options, sig) => {
        const outcome = await host.broker.ask(toolCall, options, sig);
        await host.recordDecision(toolCall.toolCallId, outcome.outcome === "selected" ? outcome.optionId : "cancelled");
        return outcome;
      },
      context: (sig, toolCallId) => {
        // Exactly the session's recorded environment: never the daemon's own, never another window's.
        const env = host.env();
        const umask = sessionUmask(record);
        const editorMs = host.daemonTools.editorTimeoutMs();
        return {
          sessionId: record.id,
          cwd,
          roots,
          env,
          umask,
          signal: sig,
          files: checkpointed(routedFiles(record.id, pick, localFiles(umask), sig, editorMs)),
          snapshots: this.snapshots,
          allowPrivateNetwork: host.allowPrivateNetwork(),
          commands: routedCommands(record.id, pick, localCommands(env), editorMs, env),
          search: host.daemonTools.searches,
          sandbox,
          setPlan: (entries: PlanEntry[]) => host.emit({ sessionUpdate: "plan", entries }),
          controls: host.controls,
          jobs: host.jobs,
          skills: host.skills,
          subagent: host.subagent(runner, toolCallId),
          askUser: async (question: string, choices: string[]) => {
            const options: PermissionOption[] = [
              ...choices.map((c, i) => ({ optionId: `answer_${i}`, name: c, kind: "allow_once" as const })),
              { optionId: "dismiss", name: "Dismiss", kind: "reject_once" as const },
            ];
            const outcome = await host.broker.ask({ toolCallId, title: question, kind: "other", status: "in_progress" }, options, sig);
            if (outcome.outcome !== "selected" || !outcome.optionId.startsWith("answer_")) return undefined;
            return choices[Number(outcome.optionId.slice("answer_".length))];
          },
        };
      },
    };
    return runToolCall(runner, call, signal);
  }
}
