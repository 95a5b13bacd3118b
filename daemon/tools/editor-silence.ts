/**
 * A window's memory of the editor requests it let time out. A client may advertise `fs` or
 * `terminal` and then never answer: without this, every read would wait the whole bound
 * (editorTimeoutSeconds, 60 s by default) before falling back to the disk. Once a method timed out,
 * later requests of it go the local way at once, and the window is asked again ASK_AGAIN_MS later
 * (or as soon as it answers that method, a request that was already under way). One per window
 * (acp/connection.ts), so every session attached to it gains from what one of them learned.
 */

/** How long a method that timed out is left unasked: long enough to spare many calls their wait. */
export const ASK_AGAIN_MS = 5 * 60_000;

export class EditorSilence {
  /** When each method last timed out. */
  private readonly since = new Map<string, number>();
  /** Methods the window answered with a result at least once. */
  private readonly took = new Set<string>();

  constructor(
    /** Told of each timeout once: the window's log names the method and the window. */
    private readonly warn: (method: string, timeoutMs: number, askAgainMs: number) => void,
    readonly askAgainMs = ASK_AGAIN_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** `method` timed out lately: go the local way without asking. */
  silent(method: string): boolean {
    const at = this.since.get(method);
    if (at === undefined) return false;
    if (this.now() - at < this.askAgainMs) return true;
    this.since.delete(method);
    return false;
  }

  timedOut(method: string, timeoutMs: number): void {
    this.since.set(method, this.now());
    this.warn(method, timeoutMs, this.askAgainMs);
  }

  /** The window answered `method`: `ok` with a result, else with an error (alive, but it took nothing). */
  answered(method: string, ok: boolean): void {
    this.since.delete(method);
    if (ok) this.took.add(method);
  }

  /** Whether the window ever answered `method` with a result in this connection (a write: took one). */
  everTook(method: string): boolean {
    return this.took.has(method);
  }
}
