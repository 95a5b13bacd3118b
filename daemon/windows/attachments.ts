/**
 * The windows attached to one session: who gets its updates, and who may be waited for. A window
 * attaches on new, load, resume or a prompt, and leaves on close or when its connection drops; a
 * held turn or a pending question waits here for the next one to attach.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { ClientPort } from "./port.js";

export class Attachments implements Iterable<ClientPort> {
  private readonly ports = new Set<ClientPort>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly sessionId: string) {}

  get size(): number {
    return this.ports.size;
  }

  [Symbol.iterator](): Iterator<ClientPort> {
    return this.ports[Symbol.iterator]();
  }

  has(port: ClientPort): boolean {
    return this.ports.has(port);
  }

  /** Adds `port` (again is a no-op) and wakes whoever waits for a window. */
  attach(port: ClientPort): void {
    this.add(port);
    this.wake();
  }

  /**
   * Adds `port` to the windows sent updates, waking nobody yet: a window that loads is added the
   * moment its replay catches up, and woken for once its answer is out (`wake`).
   */
  add(port: ClientPort): void {
    this.ports.add(port);
  }

  /** Wakes whoever waits for a window (a held turn, a question asked while nobody was attached). */
  wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Removes `port`; false when it was not attached. */
  detach(port: ClientPort): boolean {
    return this.ports.delete(port);
  }

  /** Whether a window that can still be reached is attached. */
  any(): boolean {
    return [...this.ports].some((p) => !p.closed);
  }

  /** Sends an update to every reachable window but `exclude`, without recording it. */
  send(update: SessionUpdate, exclude?: ClientPort): void {
    for (const port of this.ports) if (port !== exclude && !port.closed) port.sendUpdate(this.sessionId, update);
  }

  /** Resolves true at the next attach, or false at the timeout or abort. */
  waitForAttach(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (v: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.waiters.delete(onAttach);
        resolve(v);
      };
      const onAttach = (): void => done(true);
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      timer.unref();
      this.waiters.add(onAttach);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
