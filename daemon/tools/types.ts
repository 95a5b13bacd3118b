/**
 * What a built-in tool is: a schema the model sees, a zod parser for what the model sends, how the
 * editor should show the call, what the permission gate must judge, and the work itself.
 */
import type { ToolCallContent, ToolCallLocation, ToolKind, PlanEntry, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { z } from "zod";
import type { EditorSilence } from "./editor-silence.js";
import type { FileSnapshots } from "./file-snapshots.js";
import type { Sandbox } from "./sandbox.js";
import type { SearchRunner, SearchThreadsView } from "./search-types.js";

export type { ToolCallContent, ToolCallLocation, ToolKind, PlanEntry };

/** What a call touches, for the permission gate. Paths are absolute and already resolved. */
export type Access =
  | { type: "none" }
  | { type: "read"; paths: string[] }
  /** `named`: the same paths as the model named them, absolute but links not followed (for protected paths). */
  | { type: "write"; paths: string[]; named?: string[] }
  /** `outsideSandbox`: the model asks to run it unconfined; only a question the user answers allows that. */
  | { type: "execute"; command: string; cwd: string; outsideSandbox?: boolean }
  /** A request to a web server; the question and an "always" answer are per host (host:port). */
  | { type: "fetch"; url: string; host: string }
  /** A tool of an MCP server; `readOnly` is the server's own hint, which never skips a question. */
  | { type: "mcp"; server: string; name: string; readOnly: boolean };

export interface ToolResult {
  /** What the model reads back. */
  output: string;
  /** What the editor shows (a diff for edits, text for reads, a terminal for commands). */
  content?: ToolCallContent[];
  /** A failed call is reported as `failed` and its output tells the model why. */
  failed?: boolean;
  rawOutput?: Record<string, unknown>;
}

/** Text files, through the editor when it offered to (unsaved buffers win), else the disk. */
export interface FileAccess {
  /** Reads the whole file as text; `encoding` tells how to write it back unchanged. */
  read(path: string): Promise<{ text: string; encoding: TextEncodingName }>;
  /** Writes text; an existing non-UTF-8 file keeps its encoding and never goes through the editor. */
  write(path: string, text: string, encoding?: TextEncodingName): Promise<void>;
  exists(path: string): Promise<boolean>;
}

export type { TextEncodingName } from "./text-encoding.js";
import type { TextEncodingName } from "./text-encoding.js";

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  output: string;
  truncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  /** Set when the command ran in the editor's terminal. */
  terminalId?: string;
}

export interface CommandRunner {
  /** `sandbox`: run confined (tools/sandbox.ts); absent, the command runs as it is. `umask`: the session's (umask.ts). */
  run(
    command: string,
    opts: { cwd: string; timeoutMs: number; signal: AbortSignal; umask: number; sandbox?: Sandbox | undefined; onTerminal?(terminalId: string): void },
  ): Promise<CommandResult>;
}

export interface ToolContext {
  sessionId: string;
  /** The session's cwd, resolved through links. */
  cwd: string;
  /** cwd plus additionalDirectories, resolved through links: the workspace boundary. */
  roots: readonly string[];
  env: Record<string, string | undefined>;
  /** The umask of the window that created the session: for the files the tools create and the commands they run. */
  umask: number;
  signal: AbortSignal;
  toolCallId: string;
  files: FileAccess;
  /** What the model last saw of each file: edits of a file changed since are refused. */
  snapshots: FileSnapshots;
  commands: CommandRunner;
  /** Where this call's commands run confined; undefined: unconfined (danger-full-access, no sandbox, or the user allowed it outside once). */
  sandbox: Sandbox | undefined;
  /** Sends a tool_call_update for this call while it runs (e.g. the terminal it opened). */
  update(fields: Omit<ToolCallUpdate, "toolCallId">): void;
  /** Replaces the session's plan (todo_write). */
  setPlan(entries: PlanEntry[]): void;
  /** Asks the user a question with fixed answers; undefined when dismissed or cancelled. */
  askUser(question: string, choices: string[]): Promise<string | undefined>;
  /** config.json's `webFetch.allowPrivateNetwork`: web_fetch may reach loopback and private addresses. */
  allowPrivateNetwork: boolean;
  /** The daemon's search threads (grep, glob), bounded by its searchTimeoutSeconds. */
  search: SearchRunner;
  /** The session's collaboration mode and the tools that change it. */
  controls: ToolControls;
  /** The session's background commands (run_command with background, command_*). */
  jobs: JobControl;
  /** Runs a child agent on a focused question (the task tool); absent inside a child. */
  subagent?: SubagentRunner;
  /** The session's Agent Skills (the skill tool); absent: the session has none to offer. */
  skills?: SkillLibrary;
}

/** One skill as the skill tool returns it: its body without front matter, and its folder's files. */
export interface SkillRead {
  name: string;
  /** The skill's folder, absolute. */
  folder: string;
  body: string;
  /** The body goes on past what was read. */
  clipped: boolean;
  /** The folder's other files, relative to it. */
  files: string[];
  /** The folder holds more than the files listed. */
  moreFiles: boolean;
}

/** The session's skills, found again at each call by real path inside their bounds (agent/skills.ts). */
export interface SkillLibrary {
  read(name: string): Promise<SkillRead | { error: string }>;
}

export interface JobView {
  jobId: string;
  command: string;
  cwd: string;
  pid: number | undefined;
  startedAt: string;
  state: "running" | "exited";
  exitCode: number | null;
  signal: string | null;
}

export interface JobRead extends JobView {
  output: string;
  /** Unread bytes dropped because nobody read them in time. */
  dropped: number;
}

/** How a background command starts: the session's environment and umask, confined in `sandbox` when given. */
export interface JobStart {
  env: Record<string, string | undefined>;
  umask: number;
  sandbox?: Sandbox | undefined;
}

/** A session's background commands (tools/jobs.ts). */
export interface JobControl {
  start(command: string, cwd: string, opts: JobStart): JobView;
  read(jobId: string): JobRead;
  wait(jobId: string, timeoutMs: number, signal: AbortSignal): Promise<JobRead & { timedOut: boolean }>;
  kill(jobId: string): Promise<JobRead>;
  list(): JobView[];
}

export interface SubagentResult {
  report: string;
  stopReason: string;
  steps: number;
  /** What the child did, one line a step, for the parent's tool call and the transcript. */
  transcript: string[];
}

export interface SubagentRunner {
  run(prompt: string, signal: AbortSignal, onProgress: (lines: readonly string[]) => void, opts?: { allowEdits?: boolean }): Promise<SubagentResult>;
}

export interface ToolControls {
  mode(): string;
  /** Plan mode: asks the user to approve `plan`; approval returns the session to normal mode. */
  approvePlan(plan: string, steps: string[] | undefined, toolCallId: string, signal: AbortSignal): Promise<"approved" | "rejected" | "not_in_plan">;
  /** Goal mode: the model's progress report. */
  reportGoal(status: "continue" | "complete" | "blocked", summary: string): string;
}

export interface ToolDefinition<A = unknown> {
  name: string;
  description: string;
  /**
   * Parses what the model sent (a failure goes back to the model as a tool error), and is the one
   * source of the JSON Schema the model sees (with each field's `.describe()`): the two cannot drift.
   */
  args: z.ZodType<A>;
  kind: ToolKind;
  title(args: A, ctx: Pick<ToolContext, "cwd">): string;
  locations?(args: A, ctx: Pick<ToolContext, "cwd">): ToolCallLocation[];
  access(args: A, ctx: Pick<ToolContext, "cwd" | "roots">): Access;
  run(args: A, ctx: ToolContext): Promise<ToolResult>;
}

/** One call, its arguments parsed: everything the runner needs before and while it runs. */
export interface PreparedCall {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  access: Access;
  run(ctx: ToolContext): Promise<ToolResult>;
}

/** A tool with its argument type sealed inside, so tools of different types share one list. */
export interface Tool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  kind: ToolKind;
  prepare(rawArgs: unknown, ctx: Pick<ToolContext, "cwd" | "roots">): { ok: true; call: PreparedCall } | { ok: false; error: string };
}

/** The model-facing JSON Schema of a tool's arguments: what the model may send (zod's input side). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

export function defineTool<A>(def: ToolDefinition<A>): Tool {
  // Made when a session first lists its tools, not at every daemon start (about a fifth of the
  // bundle's evaluation went to these conversions).
  let parameters: Record<string, unknown> | undefined;
  return {
    name: def.name,
    description: def.description,
    get parameters() {
      return (parameters ??= jsonSchemaOf(def.args));
    },
    kind: def.kind,
    prepare(rawArgs, ctx) {
      const parsed = def.args.safeParse(rawArgs);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
        return { ok: false, error: `invalid arguments for ${def.name}: ${where}${issue?.message ?? "do not match the schema"}` };
      }
      const args = parsed.data;
      return {
        ok: true,
        call: {
          title: def.title(args, ctx),
          kind: def.kind,
          locations: def.locations?.(args, ctx) ?? [],
          access: def.access(args, ctx),
          run: (runCtx) => def.run(args, runCtx),
        },
      };
    },
  };
}

/**
 * What the tools of every session of one daemon share, made once per daemon (main.ts) and handed
 * down: two daemons in one process (the in-process tests make them) each keep their own bounds.
 */
export interface DaemonTools {
  /** editorTimeoutSeconds in ms, read at each tool call (the daemon re-reads config.json). */
  editorTimeoutMs(): number;
  /** grep and glob threads, each search bounded by the daemon's searchTimeoutSeconds. */
  searches: SearchThreadsView;
}

/** One editor window as the tools see it (a session's attached connection, structurally). */
export interface EditorPort {
  readonly closed: boolean;
  request(method: string, params: unknown, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  /** The requests this window let time out lately (editor-silence.ts); absent: it is always asked. */
  readonly silence?: EditorSilence;
  /**
   * The window's whole environment as its shim sent it, which its editor's terminals start with
   * (secrets included); absent when unknown.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export type EditorCapability = "readTextFile" | "writeTextFile" | "terminal";

/** Picks the window to ask for a capability, or none (then the tools work locally). */
export type EditorPicker = (cap: EditorCapability) => EditorPort | undefined;
