/**
 * A session belongs to the daemon, not to a connection: windows attach and detach, the turn runs on,
 * and every update is recorded in the ledger before it fans out to every attached window.
 */
import { randomUUID } from "node:crypto";
import { RpcError } from "../../shared/jsonrpc.js";
import type { ContentBlock } from "../../shared/acp-schemas.js";
import type { ContentBlock as AcpContentBlock } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/log.js";
import type { Store } from "../store/store.js";
import { runTurn } from "../agent/turn.js";
import { systemPrompt } from "../agent/system-prompt.js";
import type { ChatModel, Usage } from "../provider/types.js";
import type { DaemonConfig } from "../config/config.js";
import { listModels } from "../provider/registry.js";
import type { CommandHost } from "../commands/builtin.js";
import { continuationText, GOAL_NOTE, nextGoalStep, type GoalBounds } from "./goal.js";
import { approvePlan, reportGoal, setMode, setModel } from "./settings.js";
import type { Inbox, InboxItem } from "../inbox/inbox.js";
import { InboxDriver } from "./inbox-driver.js";
import { runAction } from "../plugins/actions.js";
import { SurfaceEmitter } from "./surfaces.js";
import { SessionRuntime } from "./runtime.js";
import { statusSnapshot } from "./status.js";
import type { McpServer } from "../../shared/acp-schemas.js";
import { SessionMeter, STATUS_UPDATE_METHOD } from "./meter.js";
import { EditorRouter } from "./editor-router.js";
import { PermissionBroker } from "./permission-broker.js";
import { SessionTools } from "./session-tools.js";
import { SessionState, storeFailureError } from "./session-state.js";
import { filterEnvironment } from "./environment.js";
import { promptToText, titleFrom } from "./prompt-text.js";
import type { ChatMessage, ClientPort, LedgerBody, SessionRecord, SessionUpdate, StopReason } from "./types.js";

const REPLAY_HIGH_WATER = 1024 * 1024;

export interface SessionDeps {
  store: Store;
  log: Logger;
  config(): DaemonConfig;
  /** Where user-level custom commands live (`<config>/commands`). */
  configDir: string;
  maxSteps(): number;
  permissionTimeoutMs(): number;
  goalBounds(): GoalBounds;
  /** Builds the model for a reference; throws RpcError -32000 when no key is configured. */
  createModel(ref: string, env: Record<string, string | undefined>, effort: string): ChatModel;
  listSessions(cwd: string): Promise<Array<{ sessionId: string; title?: string; updatedAt: string }>>;
}

interface TurnInput {
  origin: ClientPort | undefined;
  /** What the windows see as the user's message; goal continuations have none. */
  shown?: ContentBlock[];
  /** What the model reads as the user's message. */
  modelText?: string;
  /** A built-in or plugin command: it answers by itself, without the model. */
  local?: (signal: AbortSignal) => Promise<void>;
}

interface ActiveTurn {
  id: string;
  controller: AbortController;
  origin: ClientPort | undefined;
  open: boolean;
  /** Model turns take steers between rounds; local command turns do not. */
  steerable: boolean;
}

export class Session {
  readonly attachments = new Set<ClientPort>();
  /**
   * The creating window's environment, in memory only: the provider client's keys come from here.
   * Tools get `record.environment` instead, which has no secrets.
   */
  providerEnv: Readonly<Record<string, string | undefined>> | undefined;
  private readonly state: SessionState;
  /** A write of this session failed; once the store takes writes again the ledger says so. */
  private storeFault: { message: string; turnId?: string } | undefined;
  private readonly log: Logger;
  private active: ActiveTurn | undefined;
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;
  private stopped = false;
  readonly router: EditorRouter;
  readonly broker: PermissionBroker;
  private readonly tools: SessionTools;
  private readonly runtime: SessionRuntime;

  readonly driver: InboxDriver;
  readonly meter: SessionMeter;
  private readonly surfaces: SurfaceEmitter;
  private statusSequence = 0;

  constructor(
    readonly record: SessionRecord,
    historyMessages: ChatMessage[],
    private readonly deps: SessionDeps,
    readonly inbox: Inbox,
  ) {
    this.driver = new InboxDriver(this, inbox, deps.log.child({ sessionId: record.id }));
    this.meter = new SessionMeter(record.costs);
    this.state = new SessionState(record, historyMessages, deps.store, (err) => this.onStoreFault(err));
    this.log = deps.log.child({ sessionId: record.id });
    this.router = new EditorRouter(() => this.attachments, () => this.active?.origin);
    this.broker = new PermissionBroker(record.id, this.router, () => deps.permissionTimeoutMs());
    this.tools = new SessionTools({
      record,
      env: () => this.toolEnv(),
      emit: (u) => this.emitForTurn(u),
      router: this.router,
      broker: this.broker,
      recordDecision: (id, outcome) => this.recordDecision(id, outcome),
      controls: {
        mode: () => this.record.mode,
        approvePlan: (plan, steps, toolCallId, signal) => approvePlan(this, plan, steps, toolCallId, signal),
        reportGoal: (status, summary) => reportGoal(this, status, summary),
      },
    });
    this.surfaces = new SurfaceEmitter({
      sessionId: record.id,
      attachments: () => this.attachments,
      record: (update) => this.appendLedgerUpdate(update),
      sendTo: (port, update) => port.sendUpdate(this.id, update),
      router: this.router,
      broker: this.broker,
      live: () => this.active?.open === true,
    });
    this.runtime = new SessionRuntime({
      sessionId: record.id,
      cwd: record.cwd,
      configDir: deps.configDir,
      log: this.log,
      env: () => this.toolEnv(),
      attachments: () => this.attachments,
      tools: this.tools,
    });
    if (historyMessages.length === 0) {
      this.appendHistory({ role: "system", content: systemPrompt(record.cwd, record.additionalDirectories) });
    }
  }

  get id(): string {
    return this.record.id;
  }

  /** Where `session/list` finds this session while the store's index does not hold it yet. */
  unindexedListing(): ReturnType<SessionState["unindexedListing"]> {
    return this.state.unindexedListing();
  }

  get running(): boolean {
    return this.active !== undefined;
  }

  get queuedPrompts(): number {
    return this.waiting;
  }

  attach(port: ClientPort): void {
    this.attachments.add(port);
    this.router.attached();
  }

  detach(port: ClientPort): void {
    this.attachments.delete(port);
  }

  /** Records an update in the ledger only; the caller delivers it (per-window surfaces). */
  private appendLedgerUpdate(update: SessionUpdate): void {
    this.appendLedger({ type: "update", update });
  }

  /** Records an update in the ledger and sends it to every attached window but `exclude`. */
  emit(update: SessionUpdate, exclude?: ClientPort): void {
    this.appendLedger({ type: "update", update });
    for (const port of this.attachments) {
      if (port !== exclude && !port.closed) port.sendUpdate(this.id, update);
    }
  }

  history(): readonly ChatMessage[] {
    return this.state.history();
  }

  private appendHistory(msg: ChatMessage): void {
    this.state.appendHistory(msg);
  }

  private appendLedger(entry: LedgerBody): void {
    this.state.appendLedger(entry);
  }

  /** Persists the record and waits for the disk: a commit point. */
  async commit(): Promise<void> {
    await this.state.commit();
  }

  /**
   * Sends the whole ledger to `port`, then attaches it in the same tick as the last check, so no
   * update falls between replay and live delivery. Entries the store lost or cannot read are named
   * in a warning at the end instead of passing in silence.
   */
  async replayTo(port: ClientPort): Promise<void> {
    let sent = 0;
    const missing: Array<[number, number]> = [];
    for (;;) {
      await this.state.flush();
      const entries = await this.state.ledgerFrom(sent + 1);
      let progressed = false;
      for (const { value } of entries) {
        if (value.seq <= sent) continue;
        if (value.seq > sent + 1) missing.push([sent + 1, value.seq - 1]);
        sent = value.seq;
        progressed = true;
        if (value.type === "update" && !port.closed) port.sendUpdate(this.id, value.update);
        // A long history goes out at the pace the window takes it, not all into memory at once.
        while (port.backlog() > REPLAY_HIGH_WATER && !port.closed) await new Promise((r) => setTimeout(r, 2));
      }
      // Caught up, or the store holds no more than this (a failed write memory has not reloaded from).
      if (sent >= this.record.lastSeq || !progressed) break;
    }
    this.warnOfDamage(port, missing);
    this.attach(port);
  }

  private warnOfDamage(port: ClientPort, missing: Array<[number, number]>): void {
    const span = ([a, b]: [number, number]): string => (a === b ? `${a}` : `${a}–${b}`);
    if (missing.length > 0) this.deps.store.noteDamage(`event!${this.id}!`, `ledger entries missing: ${missing.map(span).join(", ")}`, this.id);
    const own = this.deps.store.damageOf(this.id);
    // What LevelDB dropped while recovering names no session: any of them may have lost its latest entries.
    const storeWide = this.deps.store.health().damage.filter((d) => d.sessionId === undefined);
    if ((own.length === 0 && storeWide.length === 0) || port.closed) return;
    const parts = [
      ...(own.length > 0 ? [`this session's stored history is damaged (${own.map((d) => d.detail).join("; ")})`] : []),
      ...(storeWide.length > 0 ? [`the store lost data while recovering (${storeWide.map((d) => d.detail).join("; ")}), so recent entries may be missing`] : []),
    ];
    const text = `\n\n[warning] ${parts.join("; ")}. Everything that could be read is shown above; \`reasonix daemon status\` lists the damage.`;
    port.sendUpdate(this.id, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  }

  /**
   * Runs one prompt: a built-in command answers locally, a custom command expands, anything else goes
   * to the model. A prompt that arrives during a turn waits for it and runs next. In goal mode the
   * agent then keeps going on its own until the goal is done, blocked, cancelled or out of bounds.
   */
  async prompt(blocks: ContentBlock[], origin: ClientPort | undefined, queued?: InboxItem): Promise<StopReason> {
    const text = promptToText(blocks);
    if (text.length === 0) throw RpcError.invalidParams("prompt is empty");
    await this.refreshCommands();
    const resolved = this.runtime.resolve(text);
    // Fail before anything is recorded when no key is configured: the client can run setup.
    if (resolved.kind === "template" || resolved.kind === "none" || resolved.kind === "mcp") this.deps.createModel(this.record.model, this.providerEnv ?? {}, this.record.effort);
    let mcpText: string | undefined;
    if (resolved.kind === "mcp") {
      try {
        mcpText = await this.runtime.mcp.promptText(resolved.server, resolved.prompt, resolved.args);
      } catch (err) {
        throw RpcError.internal(`The MCP prompt /${resolved.server}:${resolved.prompt} failed: ${(err as Error).message}`);
      }
    }
    // A prompt that must wait is committed to the inbox first, so a crash cannot lose it.
    const parked = !queued && this.busy ? (await this.inbox.enqueue({ text, intent: "followup", source: "prompt" })).item : undefined;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    this.waiting++;
    try {
      await previous;
    } finally {
      this.waiting--;
    }
    try {
      if (parked) await this.inbox.remove(parked.id);
      if (this.stopped) return "cancelled";
      if (resolved.kind === "local") {
        const run = async (): Promise<void> => this.emitForTurn(commandAnswer(await resolved.command.run(resolved.args, this.commandHost(origin))));
        return await this.runTurnOnce({ origin, shown: blocks, local: run });
      }
      if (resolved.kind === "plugin") {
        return await this.runTurnOnce({ origin, shown: blocks, local: (signal) => this.runPluginAction(resolved.name, resolved.args, signal) });
      }
      const modelText = resolved.kind === "template" ? resolved.text : (mcpText ?? text);
      if (this.record.mode === "goal" && !this.record.goal) {
        this.record.goal = { text: modelText, status: "active", turns: 0, startedAt: new Date().toISOString() };
        this.addNote(GOAL_NOTE);
      }
      const stop = await this.runTurnOnce({ origin, shown: blocks, modelText });
      return await this.continueGoal(stop, origin);
    } finally {
      release();
      queueMicrotask(() => void this.driver.pump());
    }
  }

  /** Something runs or waits to run: new work queues behind it. */
  get busy(): boolean {
    return this.active !== undefined || this.waiting > 0 || this.driver.pumping;
  }

  /** Whether the running turn can still take a steer at its next boundary between model rounds. */
  get acceptsSteers(): boolean {
    return this.active?.open === true && this.active.steerable;
  }

  /** Goal mode: further turns without a prompt, while the model reports progress and bounds allow. */
  private async continueGoal(stop: StopReason, origin: ClientPort | undefined): Promise<StopReason> {
    let last = stop;
    for (;;) {
      const goal = this.record.goal;
      if (this.record.mode !== "goal" || !goal) return last;
      const next = nextGoalStep(goal, last, this.waiting, this.deps.goalBounds(), Date.now());
      if (next.action === "yield") return last;
      if (next.action === "stop") {
        this.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: next.message } });
        this.record.goal = undefined;
        await setMode(this, "normal", undefined);
        return last;
      }
      goal.turns++;
      this.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n[goal] Continuing on its own (turn ${goal.turns + 1}).\n\n` } });
      last = await this.runTurnOnce({ origin, modelText: continuationText(goal) });
    }
  }

  private async runTurnOnce(input: TurnInput): Promise<StopReason> {
    // After a failed write, memory goes back to what the store holds before anything new is added.
    if (this.state.fault !== undefined) await this.state.reload();
    const turn: ActiveTurn = { id: randomUUID(), controller: new AbortController(), origin: input.origin, open: true, steerable: !input.local };
    this.active = turn;
    this.record.status = "running";
    this.appendLedger({ type: "turn_start", turnId: turn.id });
    // Other windows see the prompt itself; the window that typed it already shows it.
    for (const block of input.shown ?? []) this.emit({ sessionUpdate: "user_message_chunk", content: block as AcpContentBlock }, input.origin);
    const shownText = input.shown ? promptToText(input.shown) : undefined;
    if (input.modelText !== undefined) {
      const notes = this.record.notes ?? [];
      this.record.notes = undefined;
      this.appendHistory({ role: "user", content: [...notes, input.modelText].join("\n\n") });
    }
    this.touch();
    if (!this.record.title && shownText) {
      this.record.title = titleFrom(shownText);
      this.emit({ sessionUpdate: "session_info_update", title: this.record.title, updatedAt: this.record.updatedAt });
    }
    try {
      await this.commit();
    } catch (err) {
      // Not even the prompt was saved: the turn never started, and the store decides what is true.
      await this.endWithStoreFault(turn, err);
    }
    this.meter.startTurn();
    this.notifyStatus("phase");

    let stopReason: StopReason = "end_turn";
    let failure: unknown;
    try {
      if (input.local) {
        await input.local(turn.controller.signal);
      } else {
        await this.runtime.settleTools();
        const model = this.deps.createModel(this.record.model, this.providerEnv ?? {}, this.record.effort);
        stopReason = await runTurn(
          {
            emit: (u) => this.emitForTurn(u),
            appendHistory: (m) => this.appendHistory(m),
            history: () => this.state.history(),
            toolSpecs: () => this.tools.toolSpecs(),
            runTool: (call, signal) => this.tools.run(call, signal),
            onUsage: (u) => this.onUsage(u),
            shouldStop: () => this.record.goal?.status === "blocked",
            admitSteers: () => this.admitSteers(),
            budgetExceeded: () => {
              const over = this.meter.budgetExceeded(this.deps.config());
              if (over) this.meter.outcome = { kind: "paused", reason: over.reason };
              return over?.message;
            },
          },
          model,
          turn.controller.signal,
          { maxSteps: this.deps.maxSteps() },
        );
      }
    } catch (err) {
      failure = err;
    } finally {
      turn.open = false;
    }
    if (this.state.fault !== undefined) await this.endWithStoreFault(turn, this.state.fault);
    // Steers the turn accepted but never reached wait as follow-ups: nothing typed is dropped.
    for (const item of this.inbox.accepted()) await this.inbox.setState(item.id, "queued").catch(() => undefined);
    if (turn.controller.signal.aborted) {
      stopReason = "cancelled";
      failure = undefined;
    }
    const error = failure === undefined ? undefined : failure instanceof Error ? failure.message : String(failure);
    this.appendLedger({ type: "turn_end", turnId: turn.id, ...(error ? { error } : { stopReason }) });
    this.meter.outcome ??= error
      ? { kind: "error", reason: error }
      : stopReason === "cancelled"
        ? { kind: "cancelled" }
        : stopReason === "max_turn_requests"
          ? { kind: "max_turn_requests", reason: "max_steps" }
          : { kind: "completed" };
    this.record.status = "idle";
    this.touch();
    this.active = undefined;
    try {
      await this.commit();
    } catch (err) {
      await this.endWithStoreFault(turn, err);
    }
    if (failure !== undefined) {
      this.notifyStatus("error");
      this.log.warn({ turnId: turn.id, error }, "turn failed");
      throw failure instanceof RpcError ? failure : RpcError.internal("The turn failed inside the agent.");
    }
    this.notifyStatus(this.meter.outcome.kind === "paused" ? "pause" : "completion");
    return stopReason;
  }

  /** Reloads the slash commands; when the set changed, every attached window hears of it. */
  refreshCommands(): Promise<void> {
    return this.runtime.refreshCommands();
  }

  sendCommands(port: ClientPort): void {
    this.runtime.sendCommands(port);
  }

  /** Rebuilds plugins, MCP servers and commands atomically (reloadExtensions). */
  reloadRuntime(): Promise<void> {
    return this.runtime.reload();
  }

  connectMcp(servers: McpServer[]): void {
    this.runtime.connectMcp(servers);
  }

  /** What this session's tools inherit: never the daemon's environment, never another window's. */
  toolEnv(): Record<string, string> {
    return { ...(this.record.environment ?? {}) };
  }

  /**
   * A window attaches (load or resume). Its environment changes nothing of the session's, except
   * where the session has none in memory yet: after a daemon restart the provider keys come from the
   * first window back, and a session stored before environments were recorded takes this one's.
   */
  adoptWindow(port: ClientPort): void {
    this.providerEnv ??= port.env;
    this.record.environment ??= filterEnvironment(port.env, this.deps.config().shellEnvironment);
  }

  /** `/env reload`: the session's tools inherit the calling window's environment from now on. */
  private async reloadEnvironment(port: ClientPort | undefined): Promise<string[]> {
    if (!port) throw RpcError.invalidRequest("no window to take an environment from");
    this.record.environment = filterEnvironment(port.env, this.deps.config().shellEnvironment);
    this.providerEnv = port.env;
    await this.commit();
    return Object.keys(this.record.environment).sort();
  }

  private commandHost(origin?: ClientPort): CommandHost {
    return {
      environmentNames: () => Object.keys(this.record.environment ?? {}).sort(),
      reloadEnvironment: () => this.reloadEnvironment(origin),
      record: this.record,
      queuedPrompts: this.waiting,
      pendingPermissions: this.broker.pending.size,
      mcpServers: this.runtime.mcpStatusLines(),
      grants: this.tools.memory.grants(),
      models: () => listModels(this.deps.config()).map((m) => m.ref),
      setModel: async (ref) => {
        await setModel(this, ref, undefined);
        return this.record.model;
      },
      listSessions: () => this.deps.listSessions(this.record.cwd),
      commands: () => this.runtime.available(),
    };
  }

  /** A note for the model that rides along with the next user message (mode changes). */
  addNote(note: string): void {
    this.record.notes = [...(this.record.notes ?? []), note];
  }

  config(): DaemonConfig {
    return this.deps.config();
  }

  private async runPluginAction(name: string, args: string, signal: AbortSignal): Promise<void> {
    const result = await runAction(this.runtime.plugins, name, args, { env: this.toolEnv(), signal });
    if (!result) {
      this.emitForTurn(commandAnswer(`No plugin action named ${name}.`));
      return;
    }
    if (result.kind === "prompt") {
      this.emitForTurn(commandAnswer(result.text));
      return;
    }
    await this.surfaces.show(result.surface, signal, this.active?.origin);
  }

  /** The `_reasonix.io/session/status` object (schema version 1). */
  statusSnapshot(): Record<string, unknown> {
    return statusSnapshot({
      record: this.record,
      running: this.active !== undefined,
      pendingPermissions: this.broker.pending.size,
      inbox: { depth: this.inbox.depth(), paused: this.inbox.paused },
      meter: this.meter,
      config: this.deps.config(),
      sequence: ++this.statusSequence,
      grants: this.tools.memory.grants(),
    });
  }

  /** `_reasonix.io/session/status_update` to every window; vendor data, so not in the ledger. */
  notifyStatus(event: "phase" | "usage" | "completion" | "pause" | "error"): void {
    if (this.attachments.size === 0) return;
    const status = this.statusSnapshot();
    for (const port of this.attachments) {
      if (!port.closed) port.notify(STATUS_UPDATE_METHOD, { schemaVersion: 1, sequence: status.sequence, sessionId: this.id, event, status });
    }
  }

  /**
   * At a boundary between model rounds: every accepted steer joins the conversation as a user
   * message (appended, so the cached prefix holds), every window sees it, and its inbox item goes.
   */
  private async admitSteers(): Promise<number> {
    const steers = this.inbox.accepted();
    for (const item of steers) {
      this.appendHistory({ role: "user", content: item.text });
      this.emit({ sessionUpdate: "user_message_chunk", content: { type: "text", text: item.text } });
      await this.inbox.remove(item.id);
    }
    return steers.length;
  }

  /** Runs a queued follow-up as a turn of its own, shown to every window. */
  runFollowup(item: InboxItem): Promise<StopReason> {
    return this.prompt([{ type: "text", text: item.text }], undefined, item);
  }

  /** Updates of a turn that has answered are dropped: nothing of a turn follows its stop reason. */
  private emitForTurn(update: SessionUpdate): void {
    if (this.active?.open) this.emit(update);
  }

  private onUsage(u: Usage): void {
    this.emitForTurn(this.meter.add(this.deps.config(), this.record.model, u));
    this.record.costs = this.meter.state();
    queueMicrotask(() => this.notifyStatus("usage"));
    const t = (this.record.usage ??= { rounds: 0, promptTokens: 0, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0, reasoningTokens: 0 });
    t.rounds++;
    t.promptTokens += u.promptTokens;
    t.completionTokens += u.completionTokens;
    t.cacheHitTokens += u.cacheHitTokens;
    t.cacheMissTokens += u.cacheMissTokens;
    t.reasoningTokens += u.reasoningTokens;
  }

  private touch(): void {
    this.record.updatedAt = new Date().toISOString();
  }

  /**
   * The daemon died during this session's turn: say so in the ledger, and close every tool call the
   * model was waiting on so the next request is well-formed. Nothing is re-run.
   */
  async markInterrupted(): Promise<void> {
    const answered = new Set(this.history().filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    for (const m of [...this.history()]) {
      for (const call of m.tool_calls ?? []) {
        if (!answered.has(call.id)) {
          this.appendHistory({
            role: "tool",
            tool_call_id: call.id,
            content: "Interrupted: the agent daemon stopped before this tool call finished; it may or may not have taken effect.",
          });
        }
      }
    }
    this.appendLedger({ type: "interrupted" });
    this.emit({
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "\n\n[interrupted] The agent daemon stopped during this turn. Send a prompt to continue." },
    });
    this.record.status = "interrupted";
    await this.commit();
  }

  /**
   * A write of this session failed. A running turn stops at once (its end reloads the state);
   * otherwise memory is reloaded from the store now, in turn with any prompt.
   */
  private onStoreFault(err: unknown): void {
    this.log.error({ err: (err as Error)?.message }, "session write failed");
    if (this.active) {
      this.active.controller.abort(err);
      return;
    }
    void this.serially(() => (this.state.fault !== undefined ? this.state.reload() : Promise.resolve())).catch((e: unknown) =>
      this.log.error({ err: (e as Error)?.message }, "reloading the session after a failed write failed"),
    );
  }

  /**
   * Ends a turn whose writes failed: memory goes back to what the store holds, every window hears why
   * (live only: the store cannot take it now), and the prompt fails with the cause. The ledger gets
   * the same notice once the store takes writes again (repairAfterStoreFault).
   */
  private async endWithStoreFault(turn: ActiveTurn, err: unknown): Promise<never> {
    const error = storeFailureError(err);
    turn.open = false;
    this.active = undefined;
    await this.state.reload().catch(() => undefined);
    this.record.status = "idle";
    this.storeFault = { message: error.message, turnId: turn.id };
    // The window that prompted gets the error as its answer; the others hear it here.
    for (const port of this.attachments) {
      if (port !== turn.origin && !port.closed) port.sendUpdate(this.id, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n[error] ${error.message}` } });
    }
    this.notifyStatus("error");
    throw error;
  }

  /**
   * The store takes writes again: reload (a write reported as failed may have landed after all),
   * then close the failed turn in the ledger, so a later load shows what the windows were told.
   */
  async repairAfterStoreFault(): Promise<void> {
    await this.serially(async () => {
      if (this.state.fault !== undefined) await this.state.reload();
      const fault = this.storeFault;
      if (!fault) return;
      this.storeFault = undefined;
      await this.state.reload();
      // A turn whose start never reached the disk left nothing to close: the store shows nothing of it.
      if (this.record.status !== "running") return;
      this.appendLedger({ type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n[error] ${fault.message}` } } });
      if (fault.turnId) this.appendLedger({ type: "turn_end", turnId: fault.turnId, error: fault.message });
      this.record.status = "idle";
      await this.commit();
    });
  }

  /** Runs `fn` after every prompt queued before it, holding later ones back until it is done. */
  private async serially<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    try {
      await previous;
      return await fn();
    } finally {
      release();
    }
  }

  /** A permission decision is a commit point: it survives a crash with the updates before it. */
  async recordDecision(toolCallId: string, outcome: string): Promise<void> {
    this.appendLedger({ type: "permission", toolCallId, outcome });
    await this.commit();
  }

  cancel(): void {
    this.active?.controller.abort(new Error("cancelled"));
  }

  /** Cancels the turn and refuses further prompts; history stays in the store. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.driver.stop();
    void this.runtime.close();
    this.cancel();
    await this.tail;
    // The history is already stored up to its last commit point; a failing disk must not keep the
    // session from closing.
    await this.commit().catch((err: unknown) => this.log.warn({ err: (err as Error)?.message }, "final save of a stopping session failed"));
  }
}

/** A local command's answer: an agent message marked as a command result, recorded like any turn. */
function commandAnswer(text: string): SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { "reasonix.io": { kind: "command" } } };
}
