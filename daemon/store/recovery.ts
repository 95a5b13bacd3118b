/**
 * The store's failed state and the way back out of it. The first failed write, or a folder that
 * went (folder.ts), stops every write with one readable cause; the way out is to close and open the
 * same folder again (a fresh log), tried by a background poll and at once by any write that finds
 * the store failed: after a full disk once 4 MiB are free, after an unwritable folder once it can be
 * written, after a passing fault straight away. A folder that is gone is never reopened: the daemon
 * refuses writes until it is restarted, since a fresh database under the same name would lose every
 * session in silence.
 */
import type { Logger } from "../log/log.js";
import { describeWriteFailure, StoreWriteError } from "./errors.js";
import { MIN_FREE_BYTES, type FolderProblem, type StoreFolder } from "./folder.js";

/** How often the folder is looked at when nothing is written: a removed folder shows within this. */
const FOLDER_CHECK_MS = 500;
/** A passing fault is not tried again by a write sooner than this after it happened (no reopen storm). */
const PASSING_FAULT_PAUSE_MS = 250;

/** What one attempt came to: writable again, still waiting for its cause to clear, or a failed reopen. */
type Attempt = "recovered" | "waiting" | "failed";

export interface RecoveryHost {
  isClosed(): boolean;
  /** Closes the database and opens it again, never creating it; throws when that fails. */
  reopen(): Promise<void>;
  /** Writes work again: whatever is queued may go. */
  resumed(): void;
}

export class Recovery {
  private failureError: StoreWriteError | undefined;
  /** When the failure began or a reopen last failed. */
  private failedAt = 0;
  private recovering = false;
  private attempt: Promise<Attempt> | undefined;
  private retryTimer: { timer: NodeJS.Timeout; wake(): void } | undefined;
  private readonly folderTimer: NodeJS.Timeout;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly folder: StoreFolder,
    private readonly log: Logger | undefined,
    private readonly host: RecoveryHost,
  ) {
    this.folderTimer = setInterval(() => this.watchFolder(), FOLDER_CHECK_MS);
    this.folderTimer.unref();
  }

  /** The cause every write fails with until the store is writable again; undefined when healthy. */
  get failure(): StoreWriteError | undefined {
    return this.failureError;
  }

  onRecovered(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A write LevelDB refused: what the folder says comes first, else the error in words. */
  fromWrite(err: unknown): StoreWriteError {
    const gone = this.folder.identityProblem();
    if (gone) return this.fromFolder(gone);
    return this.failureError ?? this.setFailure(describeWriteFailure(this.folder.dir, err), err);
  }

  /** Before and after every write: the failure when the folder is no longer the one the store opened. */
  checkFolder(): StoreWriteError | undefined {
    const problem = this.folder.identityProblem();
    return problem ? this.fromFolder(problem) : undefined;
  }

  /**
   * Tries a failed store again now rather than at the next poll. Resolves either way (`failure`
   * tells). A passing fault waits a moment first, so a fault that persists is not reopened per write.
   */
  async retryNow(): Promise<void> {
    const failure = this.failureError;
    if (!failure || failure.folder === "gone" || this.host.isClosed()) return;
    if (!failure.diskFull && failure.folder === undefined && Date.now() - this.failedAt < PASSING_FAULT_PAUSE_MS) return;
    await this.tryRecover();
  }

  stop(): void {
    clearInterval(this.folderTimer);
    if (this.retryTimer) {
      clearTimeout(this.retryTimer.timer);
      this.retryTimer.wake();
    }
  }

  /** A folder that is gone outranks any other failure (it is never retried); an unwritable one outranks none. */
  private fromFolder(problem: FolderProblem): StoreWriteError {
    const current = this.failureError;
    if (current && (current.folder === "gone" || problem.fault !== "gone")) return current;
    return this.setFailure(new StoreWriteError(problem.message, false, problem.fault));
  }

  private setFailure(failure: StoreWriteError, err?: unknown): StoreWriteError {
    this.failureError = failure;
    this.failedAt = Date.now();
    const detail = err === undefined ? {} : { err };
    this.log?.error({ store: this.folder.dir, ...detail }, `store ${failure.folder ? "folder" : "write"} failed: ${failure.message}`);
    if (failure.folder !== "gone") void this.poll();
    return failure;
  }

  /** The timer's look at the folder, so /readyz and /status tell within a beat, write or no write. */
  private watchFolder(): void {
    if (this.host.isClosed() || this.failureError?.folder === "gone") return;
    const problem = this.folder.problem();
    if (problem) this.fromFolder(problem);
  }

  /** The background path: tries again until the store is writable (or its folder is gone). */
  private async poll(): Promise<void> {
    if (this.recovering) return;
    this.recovering = true;
    let delay = 250;
    try {
      while (!this.host.isClosed() && this.failureError && this.failureError.folder !== "gone") {
        await new Promise<void>((wake) => (this.retryTimer = { timer: setTimeout(wake, delay), wake }));
        this.retryTimer = undefined;
        if (this.host.isClosed()) return;
        const outcome = await this.tryRecover();
        delay = outcome === "failed" ? Math.min(delay * 2, 5000) : 500;
      }
    } finally {
      this.recovering = false;
    }
  }

  /** One attempt at a time, shared by the poll and the writes that find the store failed. */
  private tryRecover(): Promise<Attempt> {
    this.attempt ??= this.attemptOnce().finally(() => (this.attempt = undefined));
    return this.attempt;
  }

  private async attemptOnce(): Promise<Attempt> {
    const failure = this.failureError;
    if (!failure) return "recovered";
    if (this.host.isClosed() || failure.folder === "gone") return "waiting";
    const problem = this.folder.problem();
    if (problem) {
      this.fromFolder(problem);
      return "waiting";
    }
    if (failure.diskFull && this.folder.freeBytes() < MIN_FREE_BYTES) return "waiting";
    try {
      await this.host.reopen();
    } catch (err) {
      this.failedAt = Date.now();
      this.log?.warn({ store: this.folder.dir, err }, "store reopen failed; trying again");
      return "failed";
    }
    if (this.checkFolder()) return "waiting";
    this.log?.info({ store: this.folder.dir }, "store writable again");
    this.failureError = undefined;
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch (err) {
        this.log?.error({ err }, "store recovery listener failed");
      }
    }
    this.host.resumed();
    return "recovered";
  }
}
