/**
 * A session whose write failed (a full disk, say): the running turn stops at once (its end reloads
 * the state and it is noted here); with no turn running, memory goes back to what the store holds.
 * Once the store takes writes again (`repair`), the failed turn is closed in the ledger, so a later
 * load shows what the windows were told.
 */
import type { Logger } from "../log/log.js";
import type { SessionState } from "./session-state.js";
import type { TurnLink } from "./turn-link.js";

export class StoreFaultRepair {
  /** A turn whose writes failed; once the store takes writes again the ledger says so. */
  private failedTurn: { message: string; turnId: string } | undefined;

  constructor(
    private readonly state: SessionState,
    private readonly turns: Pick<TurnLink, "serially" | "abortForStoreFault">,
    private readonly log: Logger,
  ) {}

  /** The state reported a failed write. */
  faulted(err: unknown): void {
    this.log.error({ err }, "session write failed");
    if (this.turns.abortForStoreFault(err)) return;
    const state = this.state;
    void this.turns
      .serially(() => (state.fault !== undefined ? state.reload() : Promise.resolve()))
      .catch((e: unknown) => this.log.error({ err: e }, "reloading the session after a failed write failed"));
  }

  /** The turn that stopped on it (the port's `recoverFromStoreFault`). */
  noteTurn(turnId: string, message: string): void {
    this.failedTurn = { turnId, message };
  }

  /** The store takes writes again: reload (a write reported as failed may have landed after all), close the failed turn. */
  repair(): Promise<void> {
    return this.turns.serially(async () => {
      const fault = this.failedTurn;
      this.failedTurn = undefined;
      await this.state.closeFailedTurn(fault);
    });
  }
}
