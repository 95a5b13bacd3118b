/**
 * Turns with no window hold their changes (DESIGN §6, config `detachedTurns`). Web UIs and SDK
 * providers "stop" a turn by killing the agent process, never sending session/cancel: a turn that
 * ran on would still edit files and spend on the model with nobody watching. So, with no window
 * attached, a turn stops at the next point where it would change the world or spend — before a
 * write, a command or an MCP tool not marked read-only, and before any model request — and waits
 * there until a window attaches. The round already streaming is never cut, and read-only tools run.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { DetachedTurns } from "../config/config.js";

export type { DetachedTurns };

/** A turn waiting for a window, as the status shows it. */
export interface HeldTurn {
  since: string;
  /** What the turn waits to do: a tool call's title, or its next model request. */
  before: string;
  /** When it is cancelled if no window has attached by then. */
  until: string;
}

/** What the hold needs of the session: its policy, its windows, and a way to tell them. */
export interface WindowPort {
  /** config.json's `detachedTurns`, read when the turn reaches a hold point. */
  detachedTurns(): DetachedTurns;
  /** Whether a window is attached now (an open connection on this session). */
  windowAttached(): boolean;
  /** Resolves true when a window attaches, false at the timeout or when `signal` aborts. */
  waitForWindow(timeoutMs: number, signal: AbortSignal): Promise<boolean>;
  /** How long a held turn waits (`permissionTimeoutSeconds`, as a question does). */
  holdTimeoutMs(): number;
}

const HELD_META = { "reasonix.io": { kind: "held" } };

function notice(text: string): SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n${text}\n\n` }, _meta: HELD_META };
}

/** Said as `detachedTurns: cancel` stops a turn because its last window went away. */
export const DETACHED_CANCEL_NOTICE: SessionUpdate = notice(
  "[cancelled] The last window went away without cancelling (detachedTurns: cancel): the turn is cancelled.",
);

function duration(ms: number): string {
  const s = ms / 1000;
  if (s >= 120) return `${Math.round(s / 60)} minutes`;
  return `${Math.round(s * 100) / 100} s`;
}

export class WindowHold {
  private held: HeldTurn | undefined;

  constructor(
    private readonly port: WindowPort,
    /** Records an update of the running turn (the ledger, so a window that loads sees it). */
    private readonly emit: (update: SessionUpdate) => void,
    /** The windows' status: the hold is over (a window attached). */
    private readonly notifyStatus: (event: "phase") => void,
  ) {}

  get current(): HeldTurn | undefined {
    return this.held;
  }

  /**
   * Before `before` happens: true when the turn may go on. With no window under `hold`, waits for
   * one; under `cancel`, or when none attached in time, cancels the turn (`cancelTurn`) and says so.
   */
  async clear(before: string, signal: AbortSignal, cancelTurn: (reason: Error) => void): Promise<boolean> {
    if (signal.aborted) return false;
    const policy = this.port.detachedTurns();
    if (policy === "continue" || this.port.windowAttached()) return true;
    if (policy === "cancel") {
      this.say(`[cancelled] No window is attached (detachedTurns: cancel): the turn stops before ${before}.`);
      cancelTurn(new Error("no window attached"));
      return false;
    }
    const timeoutMs = this.port.holdTimeoutMs();
    const since = Date.now();
    this.held = { since: new Date(since).toISOString(), before, until: new Date(since + timeoutMs).toISOString() };
    this.say(
      `[held] No window is attached, so the turn waits before ${before}. It goes on when a window loads or resumes this session (cancel it there to stop it); with no window for ${duration(timeoutMs)} it is cancelled.`,
    );
    let attached: boolean;
    try {
      attached = await this.port.waitForWindow(timeoutMs, signal);
    } finally {
      this.held = undefined;
    }
    if (attached) {
      // The attaching request (a load's replay, a resume) finishes its reply before the turn goes on.
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.notifyStatus("phase");
      return !signal.aborted;
    }
    if (signal.aborted) return false;
    this.say(`[cancelled] No window attached within ${duration(timeoutMs)}: the turn is cancelled before ${before}.`);
    cancelTurn(new Error("no window attached in time"));
    return false;
  }

  private say(text: string): void {
    this.emit(notice(text));
  }
}
