/**
 * The agent's view of a session (agent/session-port.ts), built over the session's parts: its state
 * and ledger, tools, runtime, meter and inbox. The agent changes a session only through this.
 */
import type { SessionPort, StatusEvent } from "../agent/session-port.js";
import type { GoalState } from "../agent/goal.js";
import type { Inbox } from "../inbox/inbox.js";
import type { Logger } from "../log/log.js";
import type { Usage } from "../provider/types.js";
import { contextWindow, type SessionMeter } from "./meter.js";
import type { SessionRuntime } from "./runtime.js";
import type { SessionDeps } from "./deps.js";
import { storeFailureError, type SessionState } from "./session-state.js";
import type { SessionTools } from "./session-tools.js";
import { modeNote, setMode } from "./settings.js";
import type { SettingsHost } from "./settings.js";
import { titleFrom } from "./prompt-text.js";
import type { ClientPort, SessionUpdate } from "./types.js";
import type { Checkpoints } from "../records/checkpoints.js";
import { withMessageId } from "../ledger/message-ids.js";

export interface TurnPortParts {
  session: SettingsHost & {
    readonly id: string;
    readonly log: Logger;
    readonly providerEnv: Readonly<Record<string, string | undefined>> | undefined;
    emitLive(update: SessionUpdate, exclude?: ClientPort): void;
    notifyStatus(event: StatusEvent): void;
    /** Remembers the failed turn, so the ledger can say so once the store takes writes again. */
    noteStoreFault(turnId: string, message: string): void;
  };
  state: SessionState;
  tools: SessionTools;
  runtime: SessionRuntime;
  meter: SessionMeter;
  inbox: Inbox;
  deps: Pick<SessionDeps, "config" | "createModel" | "maxSteps" | "goalBounds" | "permissionTimeoutMs">;
  checkpoints: Checkpoints;
  /** The session's windows as a held turn sees them (agent/window-hold.ts). */
  windows: { any(): boolean; waitForAttach(timeoutMs: number, signal: AbortSignal): Promise<boolean> };
}

export function turnPort(parts: TurnPortParts): SessionPort<ClientPort> {
  const { session, state, tools, runtime, meter, inbox, deps, checkpoints, windows } = parts;
  const record = state.record;
  const touch = (): void => {
    record.updatedAt = new Date().toISOString();
  };
  return {
    id: session.id,
    log: session.log,
    emit: (update, exclude) => session.emit(update, exclude),
    // Not recorded, but a chunk still names its message (message-ids.ts).
    emitLive: (update, exclude) => session.emitLive(withMessageId(update), exclude),
    mark: (entry) => state.appendLedger(entry),
    history: () => state.history(),
    appendHistory: (msg) => state.appendHistory(msg),
    takeNotes: () => {
      const notes = record.notes ?? [];
      record.notes = undefined;
      return notes;
    },
    addNote: (note) => session.addNote(note),
    setRunning: (running) => {
      record.status = running ? "running" : "idle";
      touch();
    },
    nameFrom: (text) => {
      if (record.title) return;
      record.title = titleFrom(text);
      session.emit({ sessionUpdate: "session_info_update", title: record.title, updatedAt: record.updatedAt });
    },
    commit: () => state.commit(),
    storeFault: () => (state.fault === undefined ? undefined : storeFailureError(state.fault)),
    recoverFromStoreFault: async (turnId, message) => {
      await state.reload().catch(() => undefined);
      record.status = "idle";
      session.noteStoreFault(turnId, message);
    },
    createModel: () => deps.createModel(record.model, session.providerEnv ?? {}, record.effort),
    settleTools: () => runtime.settleTools(),
    toolSpecs: () => tools.toolSpecs(),
    runTool: (call, signal) => tools.run(call, signal),
    maxSteps: () => deps.maxSteps(),
    goalBounds: () => deps.goalBounds(),
    mode: () => record.mode,
    goal: () => record.goal,
    setGoal: (goal: GoalState | undefined) => {
      record.goal = goal;
    },
    leaveGoalMode: () => setMode(session, "normal", undefined),
    acceptedSteers: () => inbox.accepted(),
    removeSteer: (id) => inbox.remove(id),
    requeueSteers: async () => {
      for (const item of inbox.accepted()) await inbox.setState(item.id, "queued").catch(() => undefined);
    },
    startMeter: () => meter.startTurn(),
    budgetExceeded: () => {
      const over = meter.budgetExceeded(deps.config());
      if (over) meter.outcome = { kind: "paused", reason: over.reason };
      return over?.message;
    },
    onUsage: (u: Usage) => {
      const update = meter.add(deps.config(), record.model, u);
      record.costs = meter.state();
      queueMicrotask(() => session.notifyStatus("usage"));
      const t = (record.usage ??= { rounds: 0, promptTokens: 0, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0, reasoningTokens: 0 });
      t.rounds++;
      t.promptTokens += u.promptTokens;
      t.completionTokens += u.completionTokens;
      t.cacheHitTokens += u.cacheHitTokens;
      t.cacheMissTokens += u.cacheMissTokens;
      t.reasoningTokens += u.reasoningTokens;
      // The round's request was the history as it stands now (its answer is appended after this).
      record.context = { promptTokens: u.promptTokens, messages: state.history().length };
      return update;
    },
    contextWindow: () => contextWindow(deps.config(), record.model),
    modeNote: () => modeNote(record.mode),
    compactionSettings: () => deps.config().compaction,
    contextAnchor: () => record.context,
    replaceHistory: (messages, info) => {
      state.replaceHistory(messages);
      // Until the next round is counted, the size is the compactor's calibrated estimate.
      record.context = { promptTokens: info.tokensAfter, messages: messages.length };
      const { focus, ...rest } = info;
      record.compaction = { ...rest, ...(focus ? { focus } : {}), count: (record.compaction?.count ?? 0) + 1, at: new Date().toISOString() };
    },
    contextUpdate: (used) => meter.contextUpdate(deps.config(), record.model, used),
    settleOutcome: (kind, reason) => {
      meter.outcome ??= reason === undefined ? { kind } : { kind, reason };
      return meter.outcome.kind;
    },
    notifyStatus: (event) => session.notifyStatus(event),
    detachedTurns: () => deps.config().detachedTurns,
    windowAttached: () => windows.any(),
    waitForWindow: (timeoutMs, signal) => windows.waitForAttach(timeoutMs, signal),
    holdTimeoutMs: () => deps.permissionTimeoutMs(),
    extraSteps: () => meter.subagentSteps,
    sealCheckpoint: () => {
      const text = checkpoints.seal();
      return text ? { sessionUpdate: "agent_message_chunk", content: { type: "text", text }, _meta: { "reasonix.io": { kind: "checkpoint" } } } : undefined;
    },
  };
}
