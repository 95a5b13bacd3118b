/**
 * A session belongs to the daemon, not to a connection: windows attach and detach, the turn runs on,
 * and every update is recorded in the ledger before it fans out to every attached window. The
 * session owns state (record, ledger, settings, windows); the agent (agent/turn-runner.ts) owns
 * the turn and reaches the session through its port (turn-port.ts).
 */
import type { ContentBlock, McpServer } from "../../shared/acp-schemas.js";
import type { Logger } from "../log/log.js";
import type { DaemonConfig } from "../config/config.js";
import type { StatusEvent } from "../agent/session-port.js";
import type { TurnRunner } from "../agent/turn-runner.js";
import { refreshSystemPrompt } from "./instructions.js";
import type { Inbox, InboxItem } from "../inbox/inbox.js";
import type { SessionDeps } from "./deps.js";
import type { SettingsHost } from "./settings.js";
import { InboxDriver, type DriverHost } from "./inbox-driver.js";
import type { SurfaceEmitter } from "./surfaces.js";
import type { SessionRuntime } from "./runtime.js";
import type { OperatorStatus, StatusReporter } from "./status.js";
import { SessionMeter } from "./meter.js";
import type { EditorRouter } from "./editor-router.js";
import type { PermissionBroker } from "./permission-broker.js";
import type { SessionTools } from "./session-tools.js";
import type { JobTable } from "../tools/jobs.js";
import type { Checkpoints } from "./checkpoints.js";
import type { TaskTranscripts } from "./task-transcripts.js";
import { SessionState } from "./session-state.js";
import { adoptWindowFacts, filterEnvironment } from "./environment.js";
import { replayLedger } from "./replay.js";
import { StartNotices } from "./notices.js";
import { wireSession } from "./wiring.js";
import { turnInputFor, type CommandHostParts } from "./command-host.js";
import type { ChatMessage, ClientPort, SessionRecord, SessionUpdate, StopReason } from "./types.js";

export type { SessionDeps } from "./deps.js";

export class Session implements SettingsHost, DriverHost {
  readonly attachments = new Set<ClientPort>();
  /** The creating window's environment, in memory only, for provider keys; tools get `record.environment`. */
  providerEnv: Readonly<Record<string, string | undefined>> | undefined;
  readonly log: Logger;
  readonly router: EditorRouter;
  readonly broker: PermissionBroker;
  readonly driver: InboxDriver;
  readonly meter: SessionMeter;
  /** Background commands: they outlive windows and end with the session (close, delete, daemon stop). */
  readonly jobs: JobTable;
  private readonly checkpoints: Checkpoints;
  private readonly transcripts: TaskTranscripts;
  private readonly state: SessionState;
  private readonly tools: SessionTools;
  private readonly runtime: SessionRuntime;
  private readonly surfaces: SurfaceEmitter;
  private readonly turns: TurnRunner<ClientPort>;
  /** A turn whose writes failed; once the store takes writes again the ledger says so. */
  private storeFault: { message: string; turnId: string } | undefined;
  private readonly status: StatusReporter;
  /** The MCP servers ending after stop(): the daemon waits for them before it exits. */
  closing: Promise<void> = Promise.resolve();
  readonly notices = new StartNotices();

  constructor(
    readonly record: SessionRecord,
    history: ChatMessage[],
    private readonly deps: SessionDeps,
    readonly inbox: Inbox,
    systemText = "",
  ) {
    this.log = deps.log.child({ sessionId: record.id });
    this.driver = new InboxDriver(this, inbox, this.log);
    this.meter = new SessionMeter(record.costs);
    this.state = new SessionState(record, history, deps.store, (err) => this.onStoreFault(err));
    ({
      router: this.router,
      broker: this.broker,
      tools: this.tools,
      surfaces: this.surfaces,
      runtime: this.runtime,
      turns: this.turns,
      status: this.status,
      jobs: this.jobs,
      checkpoints: this.checkpoints,
      transcripts: this.transcripts,
    } = wireSession(this, this.state, this.meter, inbox, deps));
    if (history.length === 0) this.state.appendHistory({ role: "system", content: systemText });
  }

  get id(): string {
    return this.record.id;
  }

  get running(): boolean {
    return this.turns.running;
  }

  get queuedPrompts(): number {
    return this.turns.queued;
  }

  /** Something runs or waits to run: new work queues behind it. */
  get busy(): boolean {
    return this.turns.running || this.turns.queued > 0 || this.driver.pumping;
  }

  get acceptsSteers(): boolean {
    return this.turns.acceptsSteers;
  }

  /** No turn, nothing waiting, no question pending, no job running: the daemon may stop or hand over. */
  isIdle(): boolean {
    return !this.busy && this.broker.pending.size === 0 && this.jobs.running() === 0;
  }

  attach(port: ClientPort): void {
    this.attachments.add(port);
    this.router.attached();
  }

  detach(port: ClientPort): void {
    this.attachments.delete(port);
  }

  /** Records an update in the ledger and sends it to every attached window but `exclude`. */
  emit(update: SessionUpdate, exclude?: ClientPort): void {
    this.state.appendLedger({ type: "update", update });
    this.emitLive(update, exclude);
  }

  /** Sends an update to the windows without recording it. */
  emitLive(update: SessionUpdate, exclude?: ClientPort): void {
    for (const port of this.attachments) if (port !== exclude && !port.closed) port.sendUpdate(this.id, update);
  }

  /** Persists the record and waits for the disk: a commit point. */
  commit(): Promise<void> {
    return this.state.commit();
  }

  /** Where `session/list` finds this session while the store's index does not hold it yet. */
  unindexedListing(): ReturnType<SessionState["unindexedListing"]> {
    return this.state.unindexedListing();
  }

  /** Sends the whole ledger to `port`, then attaches it, so no update falls between replay and live. */
  async replayTo(port: ClientPort): Promise<void> {
    await replayLedger(this.state, this.deps.store, port);
    this.attach(port);
  }

  /**
   * Runs one prompt: a built-in command answers locally, a custom command expands, anything else goes
   * to the model. A prompt that arrives during a turn waits for it and runs next.
   */
  async prompt(blocks: ContentBlock[], origin: ClientPort | undefined, queued?: InboxItem, messageId?: string): Promise<StopReason> {
    // A failed store is tried again now, so a turn that failed with it is closed in the ledger before this one.
    if (this.deps.store.failure) await this.deps.store.retryNow();
    const input = await turnInputFor(this.hostParts(), blocks, origin, messageId);
    // A prompt that must wait is committed to the inbox first, so a crash cannot lose it.
    const parked = !queued && this.busy ? (await this.inbox.enqueue({ text: input.shownText, intent: "followup", source: "prompt" })).item : undefined;
    try {
      return await this.turns.run(input, async () => {
        if (parked) await this.inbox.remove(parked.id);
      });
    } finally {
      queueMicrotask(() => void this.driver.pump());
    }
  }

  /** Runs a queued follow-up as a turn of its own, shown to every window. */
  runFollowup(item: InboxItem): Promise<StopReason> {
    return this.prompt([{ type: "text", text: item.text }], undefined, item);
  }

  refreshCommands(): Promise<void> {
    return this.runtime.refreshCommands();
  }

  sendCommands(port: ClientPort): void {
    this.runtime.sendCommands(port);
  }

  /** Rebuilds plugins, MCP servers and commands atomically, then the system prompt; returns the notice (reloadExtensions, /reload). */
  async reloadRuntime(): Promise<string> {
    await this.runtime.reload();
    return refreshSystemPrompt(this.state, this.deps.configDir, this.runtime.skipped);
  }

  /** Ends the session's MCP servers (daemon stop); the session stays as it is. */
  closeExtensions(): Promise<void> {
    return this.runtime.close();
  }

  connectMcp(servers: McpServer[]): void {
    this.runtime.connectMcp(servers);
  }

  /** What this session's tools inherit: never the daemon's environment, never another window's. */
  toolEnv(): Record<string, string> {
    return { ...(this.record.environment ?? {}) };
  }

  /** A window attaches (load, resume): its environment and umask fill only what the session lacks. */
  adoptWindow(port: ClientPort): void {
    this.providerEnv ??= port.env;
    adoptWindowFacts(this.record, port, this.deps.config().shellEnvironment);
  }

  /** `/env reload`: the session's tools inherit `port`'s environment from now on. */
  async takeEnvironment(port: ClientPort): Promise<string[]> {
    this.record.environment = filterEnvironment(port.env, this.deps.config().shellEnvironment);
    this.providerEnv = port.env;
    await this.commit();
    return Object.keys(this.record.environment).sort();
  }

  /** A note for the model that rides along with the next user message (mode changes). */
  addNote(note: string): void {
    this.record.notes = [...(this.record.notes ?? []), note];
  }

  config(): DaemonConfig {
    return this.deps.config();
  }

  /** The `_reasonix.io/session/status` object (schema version 1). */
  statusSnapshot(): Record<string, unknown> {
    return this.status.snapshot();
  }

  /** What an operator's /status shows of this session. */
  operatorStatus(): OperatorStatus {
    return this.status.operator();
  }

  /** `_reasonix.io/session/status_update` to every window; vendor data, so not in the ledger. */
  notifyStatus(event: StatusEvent): void {
    this.status.notify(event);
  }

  /**
   * The daemon died during this session's turn: say so in the ledger, and close every tool call the
   * model was waiting on so the next request is well-formed. Nothing is re-run.
   */
  async markInterrupted(): Promise<void> {
    this.emitLive(this.state.markInterrupted());
    await this.commit();
  }

  noteStoreFault(turnId: string, message: string): void {
    this.storeFault = { turnId, message };
  }

  /** A write of this session failed: a running turn stops at once (its end reloads the state). */
  private onStoreFault(err: unknown): void {
    this.log.error({ err }, "session write failed");
    if (this.turns.abortForStoreFault(err)) return;
    void this.turns
      .serially(() => (this.state.fault !== undefined ? this.state.reload() : Promise.resolve()))
      .catch((e: unknown) => this.log.error({ err: e }, "reloading the session after a failed write failed"));
  }

  /**
   * The store takes writes again: reload (a write reported as failed may have landed after all),
   * then close the failed turn in the ledger, so a later load shows what the windows were told.
   */
  repairAfterStoreFault(): Promise<void> {
    return this.turns.serially(async () => {
      const fault = this.storeFault;
      this.storeFault = undefined;
      await this.state.closeFailedTurn(fault);
    });
  }

  /** A permission decision is a commit point: it survives a crash with the updates before it. */
  async recordDecision(toolCallId: string, outcome: string): Promise<void> {
    this.state.appendLedger({ type: "permission", toolCallId, outcome });
    await this.commit();
  }

  cancel(): void {
    this.turns.cancel();
  }

  /** Cancels the turn and refuses further prompts; history stays in the store. */
  async stop(): Promise<void> {
    this.driver.stop();
    this.closing = this.runtime.close();
    await this.turns.stop();
    await this.jobs.killAll();
    this.tools.dispose();
    // The history is stored up to its last commit point; a failing disk must not keep the session open.
    await this.commit().catch((err: unknown) => this.log.warn({ err }, "final save of a stopping session failed"));
  }

  private hostParts(): CommandHostParts {
    const { runtime, tools, deps, surfaces, turns, jobs, checkpoints, transcripts } = this;
    return { session: this, runtime, tools, deps, surfaces, turns, jobs, checkpoints, transcripts };
  }
}
