/**
 * A subagent: `runModelLoop` on a history of its own (a fixed system prompt and the question), with the
 * read-only tools only, run through the parent's permission gate (its preset, grants and windows:
 * the parent's permissions are the ceiling). Bounded in steps, tokens and time; the parent's cancel
 * ends it; each of its rounds is counted against the parent's turn and its usage is the parent's.
 * It reports its steps as lines for the parent's tool call and returns its final answer.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { ChatMessage, ChatModel, Usage } from "../provider/types.js";
import { runToolCall, type RunnerHost } from "../tools/runner.js";
import type { SubagentResult, SubagentRunner } from "../tools/types.js";
import { runModelLoop } from "./model-loop.js";

export const SUBAGENT_TOOLS = ["read_file", "list_directory", "glob", "grep"] as const;
/** With `allowEdits`: what changes files, through the same gate as the parent's own calls. */
export const SUBAGENT_EDIT_TOOLS = ["write_file", "edit_file", "multi_edit", "run_command"] as const;

export interface SubagentLimits {
  maxSteps: number;
  maxTokens: number;
  seconds: number;
}

export interface SubagentDeps {
  /** The parent's tool runner: its gate, grants and windows. */
  runner: RunnerHost;
  /** The parent's task call: the child's permission questions are asked under it. */
  toolCallId: string;
  createModel(): ChatModel;
  /** The child's usage, counted as the parent's. */
  onUsage(usage: Usage): void;
  /** One child round, counted against the parent turn's steps. */
  countStep(): void;
  limits: SubagentLimits;
  /** Keeps the child's whole conversation once it ends (the session stores it for `/tasks`). */
  keep?(transcript: SubagentTranscript): void;
  /** Before each of the child's model requests: the parent turn's hold for a window (window-hold.ts). */
  beforeRequest?(signal: AbortSignal): Promise<void>;
}

export interface SubagentTranscript {
  toolCallId: string;
  prompt: string;
  startedAt: string;
  stopReason: string;
  steps: number;
  messages: ChatMessage[];
}

export function subagentPrompt(roots: readonly string[], edits: boolean): string {
  return [
    "You are a subagent of Reasonix, a coding agent. You do one focused task for it.",
    "Workspace folders:",
    ...roots.map((r) => `- ${r}`),
    edits
      ? "You may read, search, write and edit files and run commands. Read before you edit; keep edits minimal."
      : "You may only read: read_file, list_directory, glob, grep.",
    "Search before reading whole files, and read only what the task needs. Never invent file contents.",
    "When you are done, reply with a concise report (facts, file paths with line numbers, what you changed);",
    "nobody can ask you follow-up questions.",
  ].join("\n");
}

/** The child's steps as lines of the parent's call: each tool call a line, ticked when it ends. */
class ChildProgress {
  readonly lines: string[] = [];
  private readonly callLine = new Map<string, number>();

  constructor(private readonly onProgress: (lines: readonly string[]) => void) {}

  say(line: string): void {
    this.lines.push(line);
    this.onProgress([...this.lines]);
  }

  /** The child's tool calls show as lines of the parent's call, not as calls of their own. */
  emit(u: SessionUpdate): void {
    if (u.sessionUpdate === "tool_call") {
      this.callLine.set(u.toolCallId, this.lines.length);
      this.say(`- ${u.title}${u.status === "failed" ? " (failed)" : ""}`);
    } else if (u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed")) {
      const at = this.callLine.get(u.toolCallId);
      if (at !== undefined) this.lines[at] = `${this.lines[at]}${u.status === "failed" ? " (failed)" : " ✓"}`;
      this.onProgress([...this.lines]);
    }
  }
}

/** The parent's gate and grants with the child's own tools; its questions asked under the task's call. */
function childHost(runner: RunnerHost, tools: RunnerHost["tools"], taskCallId: string, progress: ChildProgress): RunnerHost {
  return {
    ...runner,
    tools,
    emit: (u) => progress.emit(u),
    // The editor knows the task call, not the child's calls: questions are asked under the former.
    askPermission: (toolCall, options, sig) =>
      runner.askPermission({ ...toolCall, toolCallId: taskCallId, status: "in_progress", title: `Subagent: ${toolCall.title ?? "a tool call"}` }, options, sig),
    context: (sig, id) => {
      // A child never starts a child of its own.
      const { subagent: _none, ...ctx } = runner.context(sig, id);
      return ctx;
    },
  };
}

/** The child's own signal: the parent's cancel, or its time bound, whichever comes first. */
function childSignal(parent: AbortSignal, seconds: number): { signal: AbortSignal; timedOut(): boolean; dispose(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const onParentAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) onParentAbort();
  else parent.addEventListener("abort", onParentAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("subagent time limit"));
  }, seconds * 1000);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      parent.removeEventListener("abort", onParentAbort);
    },
  };
}

export function subagentRunner(deps: SubagentDeps): SubagentRunner {
  return {
    async run(prompt, parentSignal, onProgress, opts = {}): Promise<SubagentResult> {
      const { runner, limits } = deps;
      const edits = opts.allowEdits === true;
      const allowed: readonly string[] = edits ? [...SUBAGENT_TOOLS, ...SUBAGENT_EDIT_TOOLS] : SUBAGENT_TOOLS;
      const tools = new Map([...runner.tools].filter(([name]) => allowed.includes(name)));
      const specs = [...tools.values()].map((t) => ({
        type: "function" as const,
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      const history: ChatMessage[] = [
        { role: "system", content: subagentPrompt(runner.roots, edits) },
        { role: "user", content: prompt },
      ];
      const startedAt = new Date().toISOString();
      const progress = new ChildProgress(onProgress);
      const child = childHost(runner, tools, deps.toolCallId, progress);
      const bound = childSignal(parentSignal, limits.seconds);
      let steps = 0;
      let tokens = 0;
      progress.say(`Subagent started (at most ${limits.maxSteps} steps).`);
      let stopReason: string;
      try {
        stopReason = await runModelLoop(
          {
            emit: () => undefined,
            appendHistory: (m) => {
              history.push(m);
              if (m.role === "assistant") {
                steps++;
                deps.countStep();
              }
            },
            history: () => history,
            toolSpecs: () => specs,
            runTool: (call, signal) => runToolCall(child, call, signal),
            onUsage: (u) => {
              tokens += u.promptTokens + u.completionTokens;
              deps.onUsage(u);
            },
            budgetExceeded: () => (tokens >= limits.maxTokens ? `[warning] The subagent used its ${limits.maxTokens} tokens.` : undefined),
            ...(deps.beforeRequest ? { beforeRequest: deps.beforeRequest } : {}),
          },
          deps.createModel(),
          bound.signal,
          { maxSteps: limits.maxSteps },
        );
      } finally {
        bound.dispose();
      }
      if (bound.timedOut()) stopReason = "time_limit";
      else if (tokens >= limits.maxTokens && stopReason === "end_turn" && history.at(-1)?.role === "tool") stopReason = "token_limit";
      const last = [...history].reverse().find((m) => m.role === "assistant" && typeof m.content === "string" && m.content.trim() !== "");
      const report = typeof last?.content === "string" ? last.content.trim() : "";
      progress.say(`Subagent finished: ${stopReason}, ${steps} step${steps === 1 ? "" : "s"}.`);
      deps.keep?.({ toolCallId: deps.toolCallId, prompt, startedAt, stopReason, steps, messages: history });
      return { report, stopReason, steps, transcript: progress.lines };
    },
  };
}
