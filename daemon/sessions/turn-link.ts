/**
 * The running turn as a session's parts see it: the editor router asks for its origin, the tools
 * send its updates and pass its holds, plugin surfaces ask whether it is still open, an MCP
 * elicitation names it, a failed write stops it. The parts are made before the agent's `TurnRunner`, which reaches them
 * through its port, so they reach the runner through this link, bound once it exists (parts.ts).
 * Until then no turn runs, and the link answers as a session with no turn does.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { TurnRunner } from "../agent/turn-runner.js";
import type { HeldTurn } from "../agent/window-hold.js";
import type { ClientPort } from "../windows/port.js";

export class TurnLink {
  private runner: TurnRunner<ClientPort> | undefined;

  bind(runner: TurnRunner<ClientPort>): void {
    if (this.runner) throw new Error("a session's turn link is bound once");
    this.runner = runner;
  }

  get running(): boolean {
    return this.runner?.running === true;
  }

  /** Prompts waiting for the turn before them. */
  get queued(): number {
    return this.runner?.queued ?? 0;
  }

  /** The running turn waits for a window (agent/window-hold.ts). */
  get held(): HeldTurn | undefined {
    return this.runner?.held;
  }

  /** The context the next request carries and the model's window. */
  context(): { used: number; size: number } {
    return this.runner ? this.runner.context() : { used: 0, size: 0 };
  }

  /** The window whose prompt started the running turn. */
  get origin(): ClientPort | undefined {
    return this.runner?.origin;
  }

  /** The running turn still takes updates (nothing of a turn follows its stop reason). */
  get open(): boolean {
    return this.runner?.open === true;
  }

  get turnId(): string | undefined {
    return this.runner?.turnId;
  }

  /** Records and sends an update of the running turn; dropped when no turn is open. */
  emit(update: SessionUpdate): void {
    this.runner?.emitForTurn(update);
  }

  /** Runs `fn` once every prompt queued before it is done (TurnRunner.serially). */
  serially<T>(fn: () => Promise<T>): Promise<T> {
    return this.runner ? this.runner.serially(fn) : fn();
  }

  /** A write failed: the running turn stops with it; false when none runs. */
  abortForStoreFault(err: unknown): boolean {
    return this.runner?.abortForStoreFault(err) ?? false;
  }

  /** A hold point of the running turn (agent/window-hold.ts): true when it may go on. */
  hold(before: string, signal: AbortSignal): Promise<boolean> {
    return this.runner ? this.runner.holdForWindow(before, signal) : Promise.resolve(true);
  }
}
