/**
 * What the agent needs of a session to run its turns, and nothing more. `sessions/session.ts`
 * implements it over the real ledger, store and windows; the agent's unit tests implement it in
 * memory. `W` is a window, opaque to the agent: it only hands it back (the turn's origin).
 */
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import type { ChatMessage, ChatModel, ToolSpec, Usage } from "../provider/types.js";
import type { ToolCallRequest } from "../tools/runner.js";
import type { Logger } from "../log/log.js";
import type { GoalBounds, GoalState } from "./goal.js";
import type { CompactionPort } from "./compactor.js";
import type { WindowPort } from "./window-hold.js";

export type LedgerMark = { type: "turn_start"; turnId: string } | { type: "turn_end"; turnId: string; stopReason?: StopReason; error?: string };

/** Claude Code-style hooks around a turn (daemon/hooks/); they say to the user what failed themselves. */
export interface TurnHooks {
  /**
   * Before the user's prompt joins the history: SessionStart (the session's first turn here) and
   * UserPromptSubmit. `context` is added to the prompt for the model; `refused`: a hook refused it.
   */
  beforePrompt(prompt: string, signal: AbortSignal): Promise<{ context: string[]; refused: boolean }>;
  /** Stop: after the model loop ended the turn (not on cancel). */
  afterTurn(stopReason: StopReason, signal: AbortSignal): Promise<void>;
}

export type StatusEvent = "phase" | "usage" | "completion" | "pause" | "error";
export type OutcomeKind = "completed" | "cancelled" | "paused" | "error" | "max_turn_requests";

export interface SessionPort<W> extends CompactionPort, WindowPort {
  readonly id: string;
  readonly log: Logger;

  /** Records an update and sends it to every attached window but `exclude`. */
  emit(update: SessionUpdate, exclude?: W): void;
  /** Sends to every attached window but `exclude` without recording (the store cannot take it). */
  emitLive(update: SessionUpdate, exclude?: W): void;
  mark(entry: LedgerMark): void;
  history(): readonly ChatMessage[];
  appendHistory(msg: ChatMessage): void;
  /** Notes that ride along with the next user message (mode changes); taking them clears them. */
  takeNotes(): string[];
  addNote(note: string): void;
  /** Status `running` while a turn runs, `idle` after; `touch` stamps updatedAt. */
  setRunning(running: boolean): void;
  /** The first prompt names the session: sets the title and tells the windows, once. */
  nameFrom(text: string): void;
  /** A commit point: everything recorded so far, durably. Throws the store's failure in words. */
  commit(): Promise<void>;
  /** A write failure memory has not been reloaded from; undefined when healthy. */
  storeFault(): unknown;
  /** Puts memory back to what the store holds and remembers that this turn's writes failed. */
  recoverFromStoreFault(turnId: string, message: string): Promise<void>;

  createModel(): ChatModel;
  /** Fixes the tool list before a turn's model requests; what the user must hear of it (an MCP server failed, late, joined). */
  settleTools(): Promise<SessionUpdate | undefined>;
  toolSpecs(): ToolSpec[];
  runTool(call: ToolCallRequest, signal: AbortSignal): Promise<string>;

  maxSteps(): number;
  goalBounds(): GoalBounds;
  mode(): string;
  goal(): GoalState | undefined;
  setGoal(goal: GoalState | undefined): void;
  /** Leaves goal mode for normal, as a mode change from the user would. */
  leaveGoalMode(): Promise<void>;

  /** Steers the inbox accepted for this turn, in order. */
  acceptedSteers(): Array<{ id: string; text: string }>;
  removeSteer(id: string): Promise<void>;
  /** Steers accepted but never reached wait as follow-ups: nothing typed is dropped. */
  requeueSteers(): Promise<void>;

  startMeter(): void;
  /** A budget used up: its warning (and the turn's outcome becomes paused). */
  budgetExceeded(): string | undefined;
  /** Counts a round's usage; returns the `usage_update` for the windows. */
  onUsage(usage: Usage): SessionUpdate;
  /** The turn's outcome unless a budget already set it; returns the outcome in force. */
  settleOutcome(kind: OutcomeKind, reason?: string): OutcomeKind;
  notifyStatus(event: StatusEvent): void;
  /** Model rounds a subagent ran for this turn: they count against its step limit. */
  extraSteps?(): number;
  /** The session's hooks; absent, none run. */
  readonly hooks?: TurnHooks | undefined;
  /** The model loop is over: the turn's checkpoint closes; its notice, when files changed. */
  sealCheckpoint?(): SessionUpdate | undefined;
}
