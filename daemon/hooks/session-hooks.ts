/**
 * A session's hooks: the configuration read again at each prompt's turn (so an edited file counts,
 * and a changed project file asks again), the project's hooks kept out until the user trusts them,
 * and each event's hooks run with the event as JSON on stdin. A hook that fails, hangs or cannot
 * start is named to the user in a notice and the turn goes on; only exit code 2 changes anything
 * (blocks a tool call, refuses a prompt, speaks to the model after a tool).
 */
import type { PermissionOption, RequestPermissionOutcome, SessionUpdate, StopReason, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { TurnHooks } from "../agent/session-port.js";
import type { Logger } from "../log/log.js";
import type { Store } from "../store/store.js";
import type { ToolHooks } from "../tools/runner.js";
import type { ToolResult } from "../tools/types.js";
import { CLAUDE_TOOL_NAMES, type Hook, type HookConfig, type HookEvent, type HookPlace, hookPlace, loadHookConfig, matches, projectHash } from "./config.js";
import { type HookRun, MAX_HOOK_OUTPUT_BYTES, runHookProcess } from "./process.js";
import { askTrust, storedTrust } from "./trust.js";

export interface HooksHost {
  sessionId: string;
  cwd: string;
  additionalDirectories: readonly string[];
  configDir: string;
  store: Store;
  log: Logger;
  /** The session's environment and umask, as its commands get them. */
  env(): Record<string, string | undefined>;
  umask(): number;
  /** The running turn's updates (recorded, sent to the windows). */
  emit(update: SessionUpdate): void;
  ask(toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<RequestPermissionOutcome>;
  /** Whether the session had turns before this life of it (SessionStart's `source`). */
  resumed(): boolean;
}

const notice = (text: string): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text: `\n\n[notice] ${text}\n\n` },
  _meta: { "reasonix.io": { kind: "notice" } },
});

const named = (h: Hook): string => `The ${h.event} hook \`${h.command}\` (${h.source})`;

export class SessionHooks implements TurnHooks, ToolHooks {
  /** The hooks that run now: the user's, and the project's once trusted. */
  private active: Hook[] = [];
  private started = false;
  /** Claude Code's `CLAUDE_PROJECT_DIR`: the repository root, as the last read found it. */
  private projectDir: string | undefined;
  private place: Promise<HookPlace> | undefined;
  /** This session's answers by hash of the project's files ("not now" is kept here only). */
  private readonly answers = new Map<string, boolean>();
  /** Problems already told, so a broken file is named once, not at every prompt. */
  private readonly told = new Set<string>();

  constructor(private readonly host: HooksHost) {}

  async beforePrompt(prompt: string, signal: AbortSignal): Promise<{ context: string[]; refused: boolean }> {
    await this.refresh(signal);
    const context: string[] = [];
    if (!this.started) {
      this.started = true;
      const source = this.host.resumed() ? "resume" : "startup";
      for (const { hook, run } of await this.fire("SessionStart", [source], { source }, signal))
        if (this.succeeded(hook, run) && run.stdout.trim()) context.push(`[Context from the SessionStart hook \`${hook.command}\`]\n${run.stdout.trim()}`);
    }
    let refused = false;
    for (const { hook, run } of await this.fire("UserPromptSubmit", [], { prompt }, signal)) {
      if (run.exitCode === 2) {
        refused = true;
        this.host.emit(notice(`${named(hook)} refused this prompt; it did not reach the model.${run.stderr.trim() ? `\n${run.stderr.trim()}` : ""}`));
      } else if (this.succeeded(hook, run) && run.stdout.trim()) {
        context.push(`[Context from the UserPromptSubmit hook \`${hook.command}\`]\n${run.stdout.trim()}`);
      }
    }
    return { context: refused ? [] : context, refused };
  }

  async afterTurn(stopReason: StopReason, signal: AbortSignal): Promise<void> {
    if (stopReason === "cancelled" || signal.aborted) return;
    for (const { hook, run } of await this.fire("Stop", [], { stop_hook_active: false, stop_reason: stopReason }, signal)) this.succeeded(hook, run);
  }

  async before(name: string, input: unknown, locations: readonly { path: string }[], signal: AbortSignal): Promise<string | undefined> {
    const event = this.toolEvent(name, input, locations);
    const blocks: string[] = [];
    for (const { hook, run } of await this.fire("PreToolUse", event.names, event.fields, signal)) {
      if (run.exitCode === 2) blocks.push(`Blocked by the PreToolUse hook \`${hook.command}\`: ${run.stderr.trim() || "(it gave no reason)"}`);
      else this.succeeded(hook, run);
    }
    return blocks.length > 0 ? blocks.join("\n\n") : undefined;
  }

  async after(name: string, input: unknown, locations: readonly { path: string }[], result: ToolResult, signal: AbortSignal): Promise<string | undefined> {
    if (result.failed) return undefined;
    const event = this.toolEvent(name, input, locations);
    const response = { ...event.path, output: result.output.slice(0, MAX_HOOK_OUTPUT_BYTES), success: true };
    const said: string[] = [];
    for (const { hook, run } of await this.fire("PostToolUse", event.names, { ...event.fields, tool_response: response }, signal)) {
      if (run.exitCode === 2) said.push(`The PostToolUse hook \`${hook.command}\` says: ${run.stderr.trim() || "(nothing)"}`);
      else this.succeeded(hook, run);
    }
    return said.length > 0 ? said.join("\n\n") : undefined;
  }

  /** Claude Code's tool name goes to the hook (its scripts test it), with `file_path` beside our `path`. */
  private toolEvent(name: string, input: unknown, locations: readonly { path: string }[]) {
    const theirs = CLAUDE_TOOL_NAMES[name];
    const path = locations[0] ? { file_path: locations[0].path } : {};
    const args = input && typeof input === "object" && !Array.isArray(input) ? input : {};
    return {
      names: theirs ? [name, theirs] : [name],
      path,
      fields: { tool_name: theirs ?? name, reasonix_tool_name: name, tool_input: { ...args, ...path } },
    };
  }

  /** Reads the configuration again; a project configuration not yet answered for is put to the user. */
  private async refresh(signal: AbortSignal): Promise<void> {
    let config: HookConfig;
    try {
      this.place ??= hookPlace(this.host.cwd, this.host.additionalDirectories);
      config = await loadHookConfig(this.host.configDir, await this.place);
    } catch (err) {
      this.host.log.warn({ err }, "hook configuration not read");
      return;
    }
    const fresh = config.problems.filter((p) => !this.told.has(p));
    for (const p of fresh) this.told.add(p);
    if (fresh.length > 0) this.host.emit(notice(fresh.join("\n")));
    this.projectDir = config.repository;
    const project = config.hooks.filter((h) => h.project);
    this.active = config.hooks.filter((h) => !h.project);
    if (project.length === 0) return;
    const hash = projectHash(config);
    // A store that cannot be read now: ask, as for files never answered for.
    let trusted = this.answers.get(hash) ?? (await storedTrust(this.host.store, config.repository, hash).catch(() => undefined));
    if (trusted === undefined) {
      trusted = await askTrust(this.host, config.repository, hash, project, signal);
      if (signal.aborted) return;
    }
    this.answers.set(hash, trusted);
    if (trusted) this.active.push(...project);
  }

  /** Every hook of the event whose matcher takes one of `names`, run at once; results in the configuration's order. */
  private async fire(
    event: HookEvent,
    names: readonly string[],
    fields: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Array<{ hook: Hook; run: HookRun }>> {
    const chosen = this.active.filter((h) => h.event === event && (names.length === 0 || matches(h.matcher, names)));
    // The same command twice (the user's file and the project's, say) runs once.
    const unique = chosen.filter((h, i) => chosen.findIndex((o) => o.command === h.command) === i);
    if (unique.length === 0 || signal.aborted) return [];
    const input = JSON.stringify({ session_id: this.host.sessionId, cwd: this.host.cwd, hook_event_name: event, ...fields });
    const env = { ...this.host.env(), CLAUDE_PROJECT_DIR: this.projectDir ?? this.host.cwd, REASONIX_SESSION_ID: this.host.sessionId };
    return Promise.all(
      unique.map(async (hook) => ({
        hook,
        run: await runHookProcess(hook.command, { cwd: this.host.cwd, env, umask: this.host.umask(), input, timeoutMs: hook.timeoutMs, signal }),
      })),
    );
  }

  /** True for exit 0; anything else but 2 and a cancel is told to the user, and the turn goes on. */
  private succeeded(hook: Hook, run: HookRun): boolean {
    if (run.exitCode === 0) return true;
    if (run.cancelled) return false;
    const why = run.spawnError
      ? `could not start: ${run.spawnError}`
      : run.timedOut
        ? `did not finish within ${hook.timeoutMs / 1000} s and was stopped (its whole process group)`
        : run.exitCode === 2
          ? "exited with 2, which this event does not act on"
          : `failed (exit ${run.exitCode ?? "by a signal"})`;
    const stderr = run.stderr.trim();
    this.host.emit(notice(`${named(hook)} ${why}; the turn goes on.${stderr ? `\n${stderr.slice(0, 2000)}` : ""}`));
    this.host.log.info({ event: hook.event, source: hook.source, exitCode: run.exitCode, timedOut: run.timedOut }, "hook failed");
    return false;
  }
}
