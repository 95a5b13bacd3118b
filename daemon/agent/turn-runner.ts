/**
 * The agent owns the turn: one at a time per session, in the order prompts arrived; each from its
 * first record to its stop reason (the model loop, steers admitted between rounds, budgets, the
 * step limit), and in goal mode the turns that follow on their own. It reaches the session only
 * through its SessionPort.
 */
import { randomUUID } from "node:crypto";
import type { ContentBlock, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { RpcError } from "../../shared/jsonrpc.js";
import { runModelLoop } from "./model-loop.js";
import { compact, compactIfNeeded, type CompactionResult } from "./compactor.js";
import { contextEstimate, currentSummary } from "./compaction.js";
import { continuationText, GOAL_NOTE, nextGoalStep } from "./goal.js";
import type { SessionPort } from "./session-port.js";
import { turnStartSlot } from "./turn-start.js";
import { WindowHold, type HeldTurn } from "./window-hold.js";
import { errorText } from "../../shared/error-text.js";

export interface TurnInput<W> {
  origin: W | undefined;
  /** What the windows see as the user's message (ACP content blocks); goal continuations have none. */
  shown?: readonly unknown[];
  /** The user message's id (ACP messageId), shared by its blocks; one is made when absent. */
  messageId?: string;
  /** The same as plain text, for the session's title. */
  shownText?: string;
  /** What the model reads as the user's message. */
  modelText?: string;
  /** A built-in or plugin command: it answers by itself, without the model. */
  local?: (signal: AbortSignal) => Promise<void>;
}

interface ActiveTurn<W> {
  id: string;
  controller: AbortController;
  origin: W | undefined;
  open: boolean;
  /** Model turns take steers between rounds; local command turns do not. */
  steerable: boolean;
}

const text = (t: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });

export class TurnRunner<W> {
  private active: ActiveTurn<W> | undefined;
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;
  private stopped = false;
  private readonly hold: WindowHold;

  constructor(private readonly port: SessionPort<W>) {
    this.hold = new WindowHold(
      port,
      (u) => this.emitForTurn(u),
      (e) => port.notifyStatus(e),
    );
  }

  get running(): boolean {
    return this.active !== undefined;
  }

  /** Prompts waiting for the turn before them. */
  get queued(): number {
    return this.waiting;
  }

  get turnId(): string | undefined {
    return this.active?.id;
  }

  /** The window whose prompt started the running turn (editor requests go there first). */
  get origin(): W | undefined {
    return this.active?.origin;
  }

  /** The running turn still takes updates (nothing of a turn follows its stop reason). */
  get open(): boolean {
    return this.active?.open === true;
  }

  /** Whether the running turn can still take a steer at its next boundary between model rounds. */
  get acceptsSteers(): boolean {
    return this.active?.open === true && this.active.steerable;
  }

  /** The running turn waits for a window before a change or a model request (window-hold.ts). */
  get held(): HeldTurn | undefined {
    return this.hold.current;
  }

  /**
   * A hold point of the running turn (its own tool calls and model requests, and its subagents'):
   * true when it may go on; false when it was cancelled (no window, by policy or in time).
   */
  holdForWindow(before: string, signal: AbortSignal): Promise<boolean> {
    const turn = this.active;
    if (!turn?.open) return Promise.resolve(true);
    return this.hold.clear(before, signal, (reason) => turn.controller.abort(reason));
  }

  /** Updates of a turn that has answered are dropped. */
  emitForTurn(update: SessionUpdate): void {
    if (this.active?.open) this.port.emit(update);
  }

  cancel(reason: unknown = new Error("cancelled")): void {
    this.active?.controller.abort(reason);
  }

  /** Refuses further prompts and cancels the running turn; resolves once nothing runs. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel();
    await this.tail;
  }

  /** Runs `fn` after every prompt queued before it, holding later ones back until it is done. */
  async serially<T>(fn: () => Promise<T>, counted = false): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    if (counted) this.waiting++;
    try {
      await previous;
    } finally {
      if (counted) this.waiting--;
    }
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * One prompt, in its place in line: a local command, or the model. In goal mode a prompt that
   * starts a goal is followed by turns of the agent's own until the goal is done, blocked,
   * cancelled or out of bounds. `beforeStart` runs once the line has reached this prompt.
   */
  run(input: TurnInput<W>, beforeStart?: () => Promise<void>): Promise<StopReason> {
    return this.serially(async () => {
      await beforeStart?.();
      if (this.stopped) return "cancelled";
      if (input.local || input.modelText === undefined) return this.runOnce(input);
      if (this.port.mode() === "goal" && !this.port.goal()) {
        this.port.setGoal({ text: input.modelText, status: "active", turns: 0, startedAt: new Date().toISOString() });
        this.port.addNote(GOAL_NOTE);
      }
      return this.continueGoal(await this.runOnce(input), input.origin);
    }, true);
  }

  private async continueGoal(stop: StopReason, origin: W | undefined): Promise<StopReason> {
    let last = stop;
    for (;;) {
      const goal = this.port.goal();
      if (this.port.mode() !== "goal" || !goal) return last;
      const next = nextGoalStep(goal, last, this.waiting, this.port.goalBounds(), Date.now());
      if (next.action === "yield") return last;
      if (next.action === "stop") {
        this.port.emit(text(next.message));
        this.port.setGoal(undefined);
        await this.port.leaveGoalMode();
        return last;
      }
      // The goal is the session's record: it is replaced through the port, never changed in place.
      const counted = { ...goal, turns: goal.turns + 1 };
      this.port.setGoal(counted);
      this.port.emit(text(`\n\n[goal] Continuing on its own (turn ${counted.turns + 1}).\n\n`));
      last = await this.runOnce({ origin, modelText: continuationText(counted) });
    }
  }

  private async runOnce(input: TurnInput<W>): Promise<StopReason> {
    const port = this.port;
    const turn: ActiveTurn<W> = { id: randomUUID(), controller: new AbortController(), origin: input.origin, open: true, steerable: !input.local };
    this.active = turn;
    port.setRunning(true);
    port.mark({ type: "turn_start", turnId: turn.id });
    // Other windows see the prompt itself; the window that typed it already shows it.
    const messageId = input.messageId ?? randomUUID();
    for (const block of input.shown ?? []) port.emit({ sessionUpdate: "user_message_chunk", content: block as ContentBlock, messageId }, input.origin);
    // The user's own prompts meet the hooks; a goal's continuations are the agent's.
    const hooked =
      input.modelText !== undefined && input.shown && port.hooks ? await port.hooks.beforePrompt(input.modelText, turn.controller.signal) : undefined;
    if (input.modelText !== undefined && !hooked?.refused)
      port.appendHistory({ role: "user", content: [...port.takeNotes(), input.modelText, ...(hooked?.context ?? [])].join("\n\n") });
    if (input.shownText) port.nameFrom(input.shownText);
    try {
      await port.commit();
    } catch (err) {
      // Not even the prompt was saved: the turn never started, and the store decides what is true.
      return this.endWithStoreFault(turn, err);
    }
    await turnStartSlot();
    port.startMeter();
    port.notifyStatus("phase");

    let stopReason: StopReason = "end_turn";
    let failure: unknown;
    try {
      if (input.local) await input.local(turn.controller.signal);
      else stopReason = hooked?.refused ? "refusal" : await this.modelLoop(turn);
    } catch (err) {
      failure = err;
    } finally {
      turn.open = false;
    }
    const fault = port.storeFault();
    if (fault !== undefined) return this.endWithStoreFault(turn, fault);
    await port.requeueSteers();
    if (turn.controller.signal.aborted) {
      stopReason = "cancelled";
      failure = undefined;
    }
    const error = failure === undefined ? undefined : errorText(failure);
    port.mark({ type: "turn_end", turnId: turn.id, ...(error ? { error } : { stopReason }) });
    const outcome = port.settleOutcome(
      error ? "error" : stopReason === "cancelled" ? "cancelled" : stopReason === "max_turn_requests" ? "max_turn_requests" : "completed",
      error ?? (stopReason === "max_turn_requests" ? "max_steps" : undefined),
    );
    port.setRunning(false);
    this.active = undefined;
    try {
      await port.commit();
    } catch (err) {
      return this.endWithStoreFault(turn, err);
    }
    if (failure !== undefined) {
      port.notifyStatus("error");
      port.log.warn({ turnId: turn.id, err: failure }, "turn failed");
      throw failure instanceof RpcError ? failure : RpcError.internal("The turn failed inside the agent.");
    }
    port.notifyStatus(outcome === "paused" ? "pause" : "completion");
    return stopReason;
  }

  private async modelLoop(turn: ActiveTurn<W>): Promise<StopReason> {
    const port = this.port;
    const told = await port.settleTools();
    if (told) this.emitForTurn(told);
    try {
      const stop = await this.loop(turn);
      await port.hooks?.afterTurn(stop, turn.controller.signal);
      return stop;
    } finally {
      const sealed = port.sealCheckpoint?.();
      if (sealed) this.emitForTurn(sealed);
    }
  }

  private loop(turn: ActiveTurn<W>): Promise<StopReason> {
    const port = this.port;
    const model = port.createModel();
    return runModelLoop(
      {
        emit: (u) => this.emitForTurn(u),
        appendHistory: (m) => port.appendHistory(m),
        history: () => port.history(),
        toolSpecs: () => port.toolSpecs(),
        runTool: (call, signal) => port.runTool(call, signal),
        onUsage: (u) => this.emitForTurn(port.onUsage(u)),
        shouldStop: () => port.goal()?.status === "blocked",
        admitSteers: () => this.admitSteers(),
        budgetExceeded: () => port.budgetExceeded(),
        beforeRequest: async (signal) => void (await this.holdForWindow("its next model request", signal)),
        beforeRound: async (signal) => {
          const result = await compactIfNeeded(port, model, (u) => this.emitForTurn(u), signal);
          // A steer that arrived while the summary was written joins the round that follows.
          if (result.kind === "compacted" || result.kind === "trimmed") await this.admitSteers();
        },
        extraSteps: () => port.extraSteps?.() ?? 0,
      },
      model,
      turn.controller.signal,
      { maxSteps: port.maxSteps() },
    );
  }

  /**
   * `/compact [focus]`, inside the local turn that runs the command: one summary request, no
   * normal model round.
   */
  async compactNow(focus: string | undefined, signal: AbortSignal): Promise<CompactionResult> {
    const told = await this.port.settleTools();
    if (told) this.emitForTurn(told);
    return compact(this.port, this.port.createModel(), (u) => this.emitForTurn(u), signal, { focus, onDemand: true });
  }

  /** The context the next request would carry (tokens), the model's window, and the summary in force. */
  context(): { used: number; size: number; summary: string | undefined } {
    const history = this.port.history();
    return {
      used: contextEstimate(history, this.port.toolSpecs(), this.port.contextAnchor()),
      size: this.port.contextWindow(),
      summary: currentSummary(history),
    };
  }

  /**
   * At a boundary between model rounds: every accepted steer joins the conversation as a user
   * message (appended, so the cached prefix holds), every window sees it, and its inbox item goes.
   */
  private async admitSteers(): Promise<number> {
    const steers = this.port.acceptedSteers();
    for (const item of steers) {
      // Shown, then appended, as a prompt is: a fork cut before the steer leaves it out of both (sessions/fork.ts).
      this.port.emit({ sessionUpdate: "user_message_chunk", content: { type: "text", text: item.text } });
      this.port.appendHistory({ role: "user", content: item.text });
      await this.port.removeSteer(item.id);
    }
    return steers.length;
  }

  /**
   * Ends a turn whose writes failed: memory goes back to what the store holds, the other windows
   * hear why (live only: the store cannot take it now), and the prompt fails with the cause.
   */
  private async endWithStoreFault(turn: ActiveTurn<W>, err: unknown): Promise<never> {
    const message = errorText(err);
    turn.open = false;
    this.active = undefined;
    await this.port.recoverFromStoreFault(turn.id, message);
    // The window that prompted gets the error as its answer; the others hear it here.
    this.port.emitLive(text(`\n\n[error] ${message}`), turn.origin);
    this.port.notifyStatus("error");
    throw err instanceof RpcError ? err : RpcError.internal(message);
  }

  /** A write failed mid-turn: the turn stops at once, and its end reloads the session. */
  abortForStoreFault(err: unknown): boolean {
    if (!this.active) return false;
    this.active.controller.abort(err);
    return true;
  }
}
