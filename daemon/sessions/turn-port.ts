/**
 * The agent's view of a session (agent/session-port.ts), over the session's parts: its state and
 * ledger, tools, runtime, meter, inbox and windows. The agent changes a session only through this,
 * and this changes the record only through `SessionState`.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { CompactionInfo } from "../agent/compactor.js";
import type { GoalState } from "../agent/goal.js";
import type { LedgerMark, OutcomeKind, SessionPort, StatusEvent, TurnHooks } from "../agent/session-port.js";
import type { Inbox } from "../inbox/inbox.js";
import { withMessageId } from "../ledger/message-ids.js";
import type { Logger } from "../log/log.js";
import type { ChatMessage, ChatModel, ToolSpec, Usage } from "../provider/types.js";
import type { Checkpoints } from "../records/checkpoints.js";
import type { ToolCallRequest } from "../tools/runner.js";
import type { Attachments } from "../windows/attachments.js";
import type { ClientPort } from "../windows/port.js";
import type { SessionDeps } from "./deps.js";
import { contextWindow, type SessionMeter } from "./meter.js";
import type { SessionRuntime } from "./runtime.js";
import { storeFailureError, type SessionState } from "./session-state.js";
import type { SessionTools } from "./session-tools.js";
import { modeNote } from "./settings.js";
import { noticeUpdate } from "./notices.js";

/** What the port reaches of the session itself, beyond its parts. */
export interface TurnPortSession {
  readonly id: string;
  readonly log: Logger;
  /** The creating window's environment, for provider keys. */
  readonly providerEnv: Readonly<Record<string, string | undefined>> | undefined;
  emit(update: SessionUpdate, exclude?: ClientPort): void;
  notifyStatus(event: StatusEvent): void;
  /** Remembers the failed turn, so the ledger can say so once the store takes writes again. */
  noteStoreFault(turnId: string, message: string): void;
  /** Back to normal mode, as the user's mode change would (settings.ts `setMode`). */
  leaveGoalMode(): Promise<void>;
}

export interface TurnPortParts {
  session: TurnPortSession;
  state: SessionState;
  attachments: Pick<Attachments, "send" | "any" | "waitForAttach">;
  tools: Pick<SessionTools, "toolSpecs" | "run">;
  runtime: Pick<SessionRuntime, "settleTools">;
  meter: SessionMeter;
  inbox: Pick<Inbox, "accepted" | "remove" | "setState">;
  deps: Pick<SessionDeps, "config" | "createModel" | "maxSteps" | "goalBounds" | "permissionTimeoutMs">;
  checkpoints: Pick<Checkpoints, "seal">;
  hooks?: TurnHooks | undefined;
}

/** A model round's usage, the turn's or a subagent's: metered, counted in the record; the `usage_update` to send. */
export function countUsage(parts: Pick<TurnPortParts, "state" | "meter" | "deps">, u: Usage, notifyStatus: (event: "usage") => void): SessionUpdate {
  const { meter, state, deps } = parts;
  const update = meter.add(deps.config(), state.record.model, u);
  state.countRound(u, meter.state());
  queueMicrotask(() => notifyStatus("usage"));
  return update;
}

export class SessionTurnPort implements SessionPort<ClientPort> {
  readonly id: string;
  readonly log: Logger;
  readonly hooks: TurnHooks | undefined;

  constructor(private readonly parts: TurnPortParts) {
    this.id = parts.session.id;
    this.log = parts.session.log;
    this.hooks = parts.hooks;
  }

  private get record() {
    return this.parts.state.record;
  }

  emit(update: SessionUpdate, exclude?: ClientPort): void {
    this.parts.session.emit(update, exclude);
  }

  /** Not recorded, but a chunk still names its message (ledger/message-ids.ts). */
  emitLive(update: SessionUpdate, exclude?: ClientPort): void {
    this.parts.attachments.send(withMessageId(update), exclude);
  }

  mark(entry: LedgerMark): void {
    this.parts.state.appendLedger(entry);
  }

  history(): readonly ChatMessage[] {
    return this.parts.state.history();
  }

  appendHistory(msg: ChatMessage): void {
    this.parts.state.appendHistory(msg);
  }

  takeNotes(): string[] {
    return this.parts.state.takeNotes();
  }

  addNote(note: string): void {
    this.parts.state.addNote(note);
  }

  setRunning(running: boolean): void {
    this.parts.state.setRunning(running);
  }

  nameFrom(text: string): void {
    const title = this.parts.state.nameFrom(text);
    if (title !== undefined) this.emit({ sessionUpdate: "session_info_update", title, updatedAt: this.record.updatedAt });
  }

  commit(): Promise<void> {
    return this.parts.state.commit();
  }

  storeFault(): unknown {
    const fault = this.parts.state.fault;
    return fault === undefined ? undefined : storeFailureError(fault);
  }

  async recoverFromStoreFault(turnId: string, message: string): Promise<void> {
    await this.parts.state.reload().catch(() => undefined);
    this.parts.state.settleIdle();
    this.parts.session.noteStoreFault(turnId, message);
  }

  createModel(): ChatModel {
    const r = this.record;
    return this.parts.deps.createModel(r.model, this.parts.session.providerEnv ?? {}, r.effort);
  }

  async settleTools(): Promise<SessionUpdate | undefined> {
    return noticeUpdate(await this.parts.runtime.settleTools(), "\n\n");
  }

  toolSpecs(): ToolSpec[] {
    return this.parts.tools.toolSpecs();
  }

  runTool(call: ToolCallRequest, signal: AbortSignal): Promise<string> {
    return this.parts.tools.run(call, signal);
  }

  maxSteps(): number {
    return this.parts.deps.maxSteps();
  }

  goalBounds(): ReturnType<SessionDeps["goalBounds"]> {
    return this.parts.deps.goalBounds();
  }

  mode(): string {
    return this.record.mode;
  }

  goal(): GoalState | undefined {
    return this.record.goal;
  }

  setGoal(goal: GoalState | undefined): void {
    this.parts.state.setGoal(goal);
  }

  leaveGoalMode(): Promise<void> {
    return this.parts.session.leaveGoalMode();
  }

  acceptedSteers(): Array<{ id: string; text: string }> {
    return this.parts.inbox.accepted();
  }

  removeSteer(id: string): Promise<void> {
    return this.parts.inbox.remove(id);
  }

  async requeueSteers(): Promise<void> {
    for (const item of this.parts.inbox.accepted()) await this.parts.inbox.setState(item.id, "queued").catch(() => undefined);
  }

  startMeter(): void {
    this.parts.meter.startTurn();
  }

  budgetExceeded(): string | undefined {
    const over = this.parts.meter.budgetExceeded(this.parts.deps.config());
    if (over) this.parts.meter.outcome = { kind: "paused", reason: over.reason };
    return over?.message;
  }

  onUsage(u: Usage): SessionUpdate {
    return countUsage(this.parts, u, (event) => this.parts.session.notifyStatus(event));
  }

  contextWindow(): number {
    return contextWindow(this.parts.deps.config(), this.record.model);
  }

  modeNote(): string | undefined {
    return modeNote(this.record.mode);
  }

  compactionSettings(): ReturnType<SessionDeps["config"]>["compaction"] {
    return this.parts.deps.config().compaction;
  }

  contextAnchor(): { promptTokens: number; messages: number } | undefined {
    return this.record.context;
  }

  replaceHistory(messages: ChatMessage[], info: CompactionInfo): void {
    this.parts.state.replaceHistory(messages, info);
  }

  contextUpdate(used: number): SessionUpdate {
    return this.parts.meter.contextUpdate(this.parts.deps.config(), this.record.model, used);
  }

  settleOutcome(kind: OutcomeKind, reason?: string): OutcomeKind {
    const meter = this.parts.meter;
    meter.outcome ??= reason === undefined ? { kind } : { kind, reason };
    return meter.outcome.kind;
  }

  notifyStatus(event: StatusEvent): void {
    this.parts.session.notifyStatus(event);
  }

  detachedTurns(): ReturnType<SessionDeps["config"]>["detachedTurns"] {
    return this.parts.deps.config().detachedTurns;
  }

  windowAttached(): boolean {
    return this.parts.attachments.any();
  }

  waitForWindow(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return this.parts.attachments.waitForAttach(timeoutMs, signal);
  }

  holdTimeoutMs(): number {
    return this.parts.deps.permissionTimeoutMs();
  }

  extraSteps(): number {
    return this.parts.meter.subagentSteps;
  }

  /** The model loop is over: the turn's checkpoint closes; its `[checkpoint N]` line when files changed. */
  sealCheckpoint(): SessionUpdate | undefined {
    const text = this.parts.checkpoints.seal();
    return text ? { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { "reasonix.io": { kind: "checkpoint" } } } : undefined;
  }
}
