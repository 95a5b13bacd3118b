/**
 * Buffers a session's store writes. Streamed chunks ride in a batch flushed every few tens of
 * milliseconds without fsync (a process crash loses nothing LevelDB already has; a power cut loses
 * milliseconds); commit points flush at once with sync, as one atomic batch.
 */
import type { BatchOp, Store } from "../store/store.js";

const FLUSH_DELAY_MS = 40;

export class SessionWriter {
  private pending: BatchOp[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    /** Told of every failed write, including the timed flushes nobody awaits. */
    private readonly onFailure: (err: unknown) => void,
  ) {}

  put(key: string, value: unknown): void {
    this.pending.push({ type: "put", key, value });
    this.schedule();
  }

  del(key: string): void {
    this.pending.push({ type: "del", key });
    this.schedule();
  }

  /** Writes everything buffered; with sync, waits for the disk. */
  flush(sync = false): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const ops = this.pending;
    this.pending = [];
    // One failed write must not poison every later one: each batch starts from a settled chain.
    this.chain = this.chain
      .catch(() => undefined)
      .then(async () => {
        if (ops.length === 0) return;
        try {
          await this.store.batch(ops, sync);
        } catch (err) {
          this.onFailure(err);
          throw err;
        }
      });
    return this.chain;
  }

  /** Drops what is buffered: after a failed write the session reloads its state from the store. */
  discard(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = [];
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush(false).catch(() => undefined);
    }, FLUSH_DELAY_MS);
  }
}
