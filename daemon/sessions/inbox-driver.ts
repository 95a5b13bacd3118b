/**
 * Turns a session's inbox into work: steers go to the running turn (or wait as follow-ups),
 * follow-ups run as turns in order whenever the session is idle and the inbox is not paused, and a
 * reload asked for during a turn runs once the session is idle. Every change of the inbox that may
 * let work start (an item added or retried, the inbox unpaused, a turn ended) wakes the driver
 * here, so no caller has to remember it.
 */
import { RpcError } from "../../shared/jsonrpc.js";
import type { Logger } from "../log/log.js";
import type { Inbox, InboxItem, Intent } from "../inbox/inbox.js";
import type { StopReason } from "./types.js";
import { errorText } from "../../shared/error-text.js";

/** What the driver needs of its session (the Session implements it). */
export interface DriverHost {
  readonly acceptsSteers: boolean;
  readonly busy: boolean;
  runFollowup(item: InboxItem): Promise<StopReason>;
}

export type Disposition = "started" | "steer_accepted" | "queued_followup";

export class InboxDriver {
  pumping = false;
  private stopped = false;
  /** A reload asked for while busy: exactly one waits, and runs when the session goes idle. */
  private reloadQueued: (() => Promise<void>) | undefined;

  constructor(
    private readonly session: DriverHost,
    private readonly inbox: Inbox,
    private readonly log: Logger,
  ) {}

  stop(): void {
    this.stopped = true;
  }

  /** Looks for work once the current task of the event loop is done (a change may let some start). */
  wake(): void {
    queueMicrotask(() => void this.pump());
  }

  /** A steer from a window: into the running turn, else in line as a follow-up. */
  async steer(text: string): Promise<{ itemId: string; disposition: "steer_accepted" | "queued_followup" }> {
    if (!text) throw RpcError.invalidParams("prompt is empty");
    const { item, disposition } = await this.enqueue(text, "steer", undefined);
    return { itemId: item.id, disposition: disposition === "steer_accepted" ? "steer_accepted" : "queued_followup" };
  }

  list(): object {
    return this.inbox.snapshot();
  }

  /** One item: its meta and what it holds. */
  get(id: string): { meta: object; item: InboxItem } {
    const item = this.inbox.item(id);
    return { meta: this.inbox.meta(item), item };
  }

  async update(id: string, text: string): Promise<object> {
    return this.inbox.meta(await this.inbox.update(id, text));
  }

  delete(id: string): Promise<void> {
    return this.inbox.delete(id);
  }

  move(id: string, toIndex: number): Promise<void> {
    return this.inbox.move(id, toIndex);
  }

  async setPaused(paused: boolean): Promise<boolean> {
    await this.inbox.setPaused(paused);
    if (!paused) this.wake();
    return this.inbox.paused;
  }

  async retry(id: string): Promise<void> {
    await this.inbox.retry(id);
    this.wake();
  }

  /** Items hold plain text with no frozen references, so a refresh only confirms the item is pending. */
  refresh(id: string): void {
    const item = this.inbox.item(id);
    if (!["queued", "blocked", "uncertain"].includes(item.state))
      throw RpcError.of("InboxRefused", `inbox item ${item.id} is ${item.state}; only pending items can be refreshed`);
  }

  /** Durably records a steer or follow-up, then places it: into the running turn, or in line. */
  async enqueue(
    text: string,
    intent: Intent,
    idempotencyKey: string | undefined,
  ): Promise<{ item: InboxItem; disposition: Disposition; idempotent: boolean; position: number; paused: boolean }> {
    const placed = await this.place(text, intent, idempotencyKey);
    return { ...placed, position: this.inbox.position(placed.item.id), paused: this.inbox.paused };
  }

  private async place(
    text: string,
    intent: Intent,
    idempotencyKey: string | undefined,
  ): Promise<{ item: InboxItem; disposition: Disposition; idempotent: boolean }> {
    if (text.trim().length === 0) throw RpcError.invalidParams("prompt is empty");
    const steering = intent === "steer" && this.session.acceptsSteers;
    const { item, idempotent } = await this.inbox.enqueue({
      text,
      intent,
      source: "acp",
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(steering ? { state: "steer_accepted" as const } : {}),
    });
    if (idempotent) return { item, disposition: item.state === "steer_accepted" ? "steer_accepted" : "queued_followup", idempotent };
    if (steering) {
      // The turn may have ended while the steer was being written: then it waits as a follow-up.
      if (this.session.acceptsSteers) return { item, disposition: "steer_accepted", idempotent };
      if (item.state === "steer_accepted") await this.inbox.setState(item.id, "queued");
    }
    const starts = !this.session.busy && !this.inbox.paused && this.inbox.nextQueued()?.id === item.id;
    this.wake();
    return { item, disposition: starts ? "started" : "queued_followup", idempotent };
  }

  /** Runs queued follow-ups one after another while the session is idle and the inbox open. */
  async pump(): Promise<void> {
    if (this.pumping || this.stopped || this.session.busy) return;
    if (this.reloadQueued) {
      const reload = this.reloadQueued;
      this.reloadQueued = undefined;
      await reload().catch((err: unknown) => this.log.warn({ err }, "queued reload failed"));
    }
    const item = this.inbox.nextQueued();
    if (!item) return;
    this.pumping = true;
    try {
      await this.inbox.setState(item.id, "running");
      await this.session.runFollowup(item);
      await this.inbox.remove(item.id);
    } catch (err) {
      const reason = errorText(err);
      this.log.warn({ itemId: item.id, err }, "follow-up could not run");
      await this.inbox.setState(item.id, "blocked", reason).catch(() => undefined);
    } finally {
      this.pumping = false;
    }
    this.wake();
  }

  /** Reload now when idle; during a turn queue exactly one, answered `{queued: true}`. */
  async reload(run: () => Promise<void>): Promise<{ queued: true } | Record<string, never>> {
    if (this.session.busy) {
      this.reloadQueued = run;
      return { queued: true };
    }
    await run();
    return {};
  }
}
