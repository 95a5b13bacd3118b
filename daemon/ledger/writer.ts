/**
 * Buffers a session's store writes. Streamed chunks ride in a batch flushed every few tens of
 * milliseconds without fsync (a process crash loses nothing LevelDB already has; a power cut loses
 * milliseconds); commit points flush at once with sync, as one atomic batch. The timed flushes of
 * every session on one store fall due together, so the store writes them as one LevelDB write
 * (store.ts) instead of one per session.
 */
import type { BatchOp, Store } from "../store/store.js";

const FLUSH_DELAY_MS = 40;

/** The timed flush of one store's writers: one timer, and every writer with something buffered. */
class FlushClock {
  private readonly due = new Set<SessionWriter>();
  private timer: NodeJS.Timeout | undefined;

  add(writer: SessionWriter): void {
    this.due.add(writer);
    this.timer ??= setTimeout(() => this.fire(), FLUSH_DELAY_MS);
  }

  remove(writer: SessionWriter): void {
    this.due.delete(writer);
  }

  private fire(): void {
    this.timer = undefined;
    const due = [...this.due];
    this.due.clear();
    for (const writer of due) writer.flush(false).catch(() => undefined);
  }
}

const clocks = new WeakMap<Store, FlushClock>();

export class SessionWriter {
  private pending: BatchOp[] = [];
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly clock: FlushClock;
  /** Counts the buffers handed to the store or dropped: a value put in an earlier one may no longer change. */
  generation = 0;

  constructor(
    private readonly store: Store,
    /** Told of every failed write, including the timed flushes nobody awaits. */
    private readonly onFailure: (err: unknown) => void,
  ) {
    let clock = clocks.get(store);
    if (!clock) clocks.set(store, (clock = new FlushClock()));
    this.clock = clock;
  }

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
    this.unschedule();
    const ops = this.pending;
    this.pending = [];
    this.generation++;
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
    this.unschedule();
    this.pending = [];
    this.generation++;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.clock.add(this);
  }

  private unschedule(): void {
    if (!this.scheduled) return;
    this.scheduled = false;
    this.clock.remove(this);
  }
}
