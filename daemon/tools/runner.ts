/**
 * Runs one model tool call and reports it the way ACP hosts render it:
 * tool_call (pending) -> [permission] -> tool_call_update in_progress -> completed | failed.
 * Every outcome, refusals included, becomes text the model reads; the turn goes on.
 */
import { clipForModel, MAX_TOOL_RESULT_CHARS } from "./clip.js";
import { errorText } from "../../shared/error-text.js";
import { randomUUID } from "node:crypto";
import type { PermissionOption, RequestPermissionOutcome, SessionUpdate, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { Access, FileAccess, PreparedCall, Tool, ToolContext, ToolResult } from "./types.js";
import { needsApproval, permissionOptions, protectedNote, protectedWrite, type ApprovalMemory, type Preset } from "./permissions.js";
import type { Sandbox } from "./sandbox.js";

export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

/** Claude Code-style hooks around every tool call (daemon/hooks/): PreToolUse and PostToolUse. */
export interface ToolHooks {
  /** Before the permission gate: the text the model reads instead of a result when a hook blocks the call. */
  before(name: string, input: unknown, locations: readonly { path: string }[], signal: AbortSignal): Promise<string | undefined>;
  /** After the result: what a hook has to say to the model about it (appended to the result), if anything. */
  after(name: string, input: unknown, locations: readonly { path: string }[], result: ToolResult, signal: AbortSignal): Promise<string | undefined>;
}

export interface RunnerHost {
  emit(update: SessionUpdate): void;
  tools: ReadonlyMap<string, Tool>;
  preset(): Preset;
  /** Plan mode blocks every edit and command, whatever the preset, until the plan is approved. */
  mode(): string;
  memory: ApprovalMemory;
  roots: readonly string[];
  cwd: string;
  askPermission(toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<RequestPermissionOutcome>;
  /** Where commands run confined now; undefined when they run as they are. */
  sandbox: Sandbox | undefined;
  /** Everything of the ToolContext but the call's own id and update function (`sandbox` included). */
  context(signal: AbortSignal, toolCallId: string): Omit<ToolContext, "toolCallId" | "update">;
  /**
   * Before a call that changes the world (`changesWorld`), once it is shown: false when the turn may
   * not go on (no window attached, sessions' `detachedTurns`); the call is then not run.
   */
  beforeChange?(title: string, signal: AbortSignal): Promise<boolean>;
  /** The session's PreToolUse and PostToolUse hooks; absent, none run. */
  hooks?: ToolHooks;
}

/** A write, a command, or an MCP tool its server does not mark read-only. */
export function changesWorld(access: Access): boolean {
  return access.type === "write" || access.type === "execute" || (access.type === "mcp" && !access.readOnly);
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === "") return {};
  return JSON.parse(raw);
}

function describeAccess(access: Access): string {
  switch (access.type) {
    case "execute":
      return `run \`${access.command}\``;
    case "write":
      return `write ${access.paths.join(", ")}`;
    case "read":
      return `read ${access.paths.join(", ")}`;
    case "mcp":
      return `use \`${access.name}\` of MCP server \`${access.server}\``;
    case "fetch":
      return `fetch ${access.url} (from ${access.host})`;
    case "none":
      return "run this tool";
  }
}

/** A prepared call at the gate, with what a question about it needs. */
interface Asking {
  host: RunnerHost;
  /** The tool's name as the model called it. */
  name: string;
  call: PreparedCall;
  toolCallId: string;
  rawInput: unknown;
  signal: AbortSignal;
}

const OUTSIDE_OPTIONS: PermissionOption[] = [
  { optionId: "allow_once_unsandboxed", name: "Allow once, outside the sandbox", kind: "allow_once" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

/**
 * A command the model asks to run outside the sandbox: asked every time, whatever was granted (a
 * grant was given for the confined command), with no "always" to give; a rejection grant stands.
 * Undefined: the user allowed it, this once.
 */
async function decideOutside({ host, name, call, toolCallId, rawInput, signal }: Asking): Promise<string | undefined> {
  const { remembered } = await host.memory.judge(name, call.access);
  if (remembered === "reject")
    return `The user has refused to let you ${describeAccess(call.access)} in this session. Do not retry it; ask the user or choose another approach.`;
  const outcome = await host.askPermission(
    {
      toolCallId,
      title: `${call.title} outside the sandbox (${host.sandbox!.describe()} otherwise)`,
      kind: call.kind,
      status: "pending",
      locations: call.locations,
      rawInput: rawInput as Record<string, unknown>,
    },
    OUTSIDE_OPTIONS,
    signal,
  );
  if (outcome.outcome === "selected" && outcome.optionId === "allow_once_unsandboxed") return undefined;
  if (outcome.outcome === "selected")
    return "The user rejected running it outside the sandbox. Do not retry it unsandboxed; ask the user or choose another approach.";
  return signal.aborted
    ? "Cancelled by the user."
    : `No answer to the permission request to ${describeAccess(call.access)} outside the sandbox; it was not done.`;
}

/** Whether the call may run: undefined, or the refusal the model reads. */
async function decide({ host, name, call, toolCallId, rawInput, signal }: Asking): Promise<string | undefined> {
  if (host.mode() === "plan" && changesWorld(call.access)) {
    return `Plan mode: you may not ${describeAccess(call.access)} yet. Finish the plan (todo_write), then call exit_plan_mode; once the user approves, edits and commands are allowed.`;
  }
  if (!needsApproval(host.preset(), call.access, host.roots)) return undefined;
  const { remembered, scope } = await host.memory.judge(name, call.access);
  if (remembered === "allow") return undefined;
  if (remembered === "reject")
    return `The user has refused to let you ${describeAccess(call.access)} in this session. Do not retry it; ask the user or choose another approach.`;
  // A protected path says so in the question itself, and its "always" options say they cover that path only.
  const guarded = protectedWrite(call.access, host.roots);
  const title = guarded ? `${call.title} (${protectedNote(guarded)})` : call.title;
  const outcome = await host.askPermission(
    { toolCallId, title, kind: call.kind, status: "pending", locations: call.locations, rawInput: rawInput as Record<string, unknown> },
    permissionOptions(scope, guarded),
    signal,
  );
  if (outcome.outcome === "selected") {
    if (outcome.optionId === "allow_once") return undefined;
    if (outcome.optionId === "allow_always") {
      if (scope) host.memory.remember(scope, "allow");
      return undefined;
    }
    if (outcome.optionId === "reject_always" && scope) host.memory.remember(scope, "reject");
    return `The user rejected the request to ${describeAccess(call.access)}. Do not retry it unchanged; ask the user or choose another approach.`;
  }
  return signal.aborted ? "Cancelled by the user." : `No answer to the permission request to ${describeAccess(call.access)}; it was not done.`;
}

export async function runToolCall(host: RunnerHost, req: ToolCallRequest, signal: AbortSignal): Promise<string> {
  const toolCallId = `call_${randomUUID()}`;
  const tool = host.tools.get(req.name);
  let rawInput: unknown;
  let prepared: ReturnType<Tool["prepare"]> | undefined;
  try {
    rawInput = parseArguments(req.arguments);
    prepared = tool?.prepare(rawInput, { cwd: host.cwd, roots: host.roots });
  } catch (err) {
    prepared = { ok: false, error: `the arguments are not valid JSON (${errorText(err)})` };
  }
  if (!tool || !prepared?.ok) {
    const error = !tool ? `there is no tool named "${req.name}"` : prepared && !prepared.ok ? prepared.error : "bad arguments";
    host.emit({
      sessionUpdate: "tool_call",
      toolCallId,
      title: req.name,
      kind: tool?.kind ?? "other",
      status: "failed",
      rawInput: { arguments: req.arguments },
      content: [text(`Error: ${error}`)],
    });
    return `Tool error: ${error}`;
  }
  const call = prepared.call;
  host.emit({
    sessionUpdate: "tool_call",
    toolCallId,
    title: call.title,
    kind: call.kind,
    status: "pending",
    locations: call.locations,
    rawInput: rawInput as Record<string, unknown>,
  });

  // With no window attached the call waits here, shown, before anything asks or runs; plan mode
  // refuses changes without running them, so those need no wait.
  if (host.beforeChange && changesWorld(call.access) && host.mode() !== "plan" && !(await host.beforeChange(call.title, signal))) {
    const note = "Not run: no window was attached to let it go on.";
    host.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [text(note)] });
    return note;
  }

  // A hook's veto comes before any question: a call it blocks is never put to the user.
  const blocked = await host.hooks?.before(req.name, rawInput, call.locations, signal);
  if (blocked !== undefined) {
    host.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [text(blocked)] });
    return blocked;
  }

  // Plan mode refuses commands before any question, so such a call goes the usual way.
  const unconfined = call.access.type === "execute" && call.access.outsideSandbox === true && host.sandbox !== undefined && host.mode() !== "plan";
  const asking: Asking = { host, name: req.name, call, toolCallId, rawInput, signal };
  const refusal = unconfined ? await decideOutside(asking) : await decide(asking);
  if (refusal !== undefined) {
    host.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [text(refusal)] });
    return refusal;
  }
  if (signal.aborted) {
    host.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [text("Cancelled.")] });
    return "Cancelled by the user before this tool ran.";
  }

  host.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  let result: ToolResult;
  try {
    const ctx = host.context(signal, toolCallId);
    result = await call.run({
      ...ctx,
      files: judgedWrites(ctx.files, call.access),
      ...(unconfined ? { sandbox: undefined } : {}),
      toolCallId,
      update: (fields) => host.emit({ sessionUpdate: "tool_call_update", toolCallId, ...fields }),
    });
  } catch (err) {
    result = { output: `Tool error: ${errorText(err)}`, failed: true };
  }
  // Any tool, an MCP server's included, may answer megabytes: neither the model nor the ledger takes
  // them whole.
  const output = clipForModel(
    result.output,
    MAX_TOOL_RESULT_CHARS,
    "the tool's result",
    "Ask for less (a line range, a narrower pattern, a filter) to see the rest.",
  );
  host.emit({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: result.failed ? "failed" : "completed",
    content: (result.content ?? [text(result.output)]).map((c) => clipContent(c)),
    ...(result.rawOutput ? { rawOutput: result.rawOutput } : {}),
  });
  const feedback = await host.hooks?.after(req.name, rawInput, call.locations, result, signal);
  return feedback === undefined ? output : `${output}\n\n${feedback}`;
}

/**
 * A call writes only the paths the gate judged. A tool resolves its path again when it runs; a link
 * along it that changed since (while the question waited, say) would make that a path nobody
 * judged, perhaps outside the workspace. The write then fails and nothing is written.
 */
function judgedWrites(files: FileAccess, access: Access): FileAccess {
  const judged = access.type === "write" ? access.paths : [];
  return {
    ...files,
    write: async (path, text, encoding) => {
      if (!judged.includes(path)) throw new Error(`${path} is not the path this call was checked for (a link along it changed since); nothing was written`);
      return files.write(path, text, encoding);
    },
  };
}

function clipContent<C extends ToolCallContent>(c: C): C {
  const inner = (c as { content?: { type?: string; text?: unknown } }).content;
  if (c.type !== "content" || inner?.type !== "text" || typeof inner.text !== "string" || inner.text.length <= MAX_TOOL_RESULT_CHARS) return c;
  return { ...c, content: { ...inner, text: clipForModel(inner.text, MAX_TOOL_RESULT_CHARS, "this output") } };
}

function text(t: string): { type: "content"; content: { type: "text"; text: string } } {
  return { type: "content", content: { type: "text", text: t } };
}
