/**
 * What a daemon that died left behind, put right by the next one. Before it serves (`recoverAtStart`):
 * half-done deletes, the list index of an older store, orphaned background jobs, inboxes whose
 * admitted work became uncertain; each of those reads only what is left over, never every session.
 * Turns stored as running are found by reading every session record, so that waits until the
 * daemon serves (`recoverInterrupted`, a page at a time between pauses): a session loaded before
 * the pass reaches it is marked interrupted by its load, exactly once either way.
 */
import { RpcError } from "../../shared/jsonrpc.js";
import type { Logger } from "../log/log.js";
import { keys, StoreDamagedError, type Store } from "../store/store.js";
import { finishRemovals } from "../store/removal.js";
import { pagesOf } from "../store/pages.js";
import { Inbox, inboxKeys } from "../inbox/inbox.js";
import { ensureListIndex } from "../records/list-index.js";
import { endOrphanedJobs } from "../records/job-records.js";
import type { SessionRecord } from "./types.js";

export interface RecoveryHost {
  readonly store: Store;
  readonly log: Logger;
  /** Loads the session (marking a turn stored as running interrupted) unless it is live. */
  get(id: string): Promise<unknown>;
  /**
   * Live, loading, or held by this daemon since it started: its load has seen (or will see) the
   * stored status, and a record the pass read as running may be one of this daemon's own turns
   * that has ended since (its window closed, the session left memory).
   */
  ours(id: string): boolean;
}

/**
 * The ids this daemon held in memory, kept only until the interrupted-turn pass ends: that pass
 * reads a page of records, then loads those stored as running, so without them a turn of this
 * daemon's that ended in between would bring back a session nobody opened.
 */
export class HeldSinceStart {
  private ids: Set<string> | null = new Set();
  note(id: string): void {
    this.ids?.add(id);
  }
  has(id: string): boolean {
    return this.ids?.has(id) ?? false;
  }
  /** The pass is over: nothing needs the ids any more. */
  end(): void {
    this.ids = null;
  }
}

/** Damage met is recorded (the store notes it) and named when a session that has it loads; it must not keep every other session from being served. */
async function tolerate(log: Logger, what: string, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    if (!(err instanceof StoreDamagedError)) throw err;
    log.error({ err }, `recovery: ${what} skipped over damage`);
  }
}

export async function recoverAtStart(host: RecoveryHost): Promise<void> {
  const { store, log } = host;
  // Deletes a daemon that died left half done: what is left of those sessions goes first.
  await tolerate(log, "unfinished deletes", async () => void (await finishRemovals(store)));
  await tolerate(log, "the session list index", () => ensureListIndex(store));
  // Background jobs of a daemon that died: nobody can read or stop them any more.
  await tolerate(log, "background jobs", async () => void (await endOrphanedJobs(store, log)));
  // Inboxes first: whatever was admitted when the old daemon died becomes uncertain, never re-run.
  await tolerate(log, "inboxes", async () => {
    for (const { key } of await store.range(inboxKeys.headPrefix)) {
      await tolerate(log, `inbox ${key}`, async () => (await Inbox.open(store, key.slice(inboxKeys.headPrefix.length))).recover());
    }
  });
}

/**
 * Turns persisted as running belonged to a daemon that died: each such session is loaded, which
 * marks the turn interrupted, visibly, and stays in memory until the idle unload takes it (a window
 * may attach meanwhile). `between` is awaited after each page of `page` records; false stops.
 */
export async function recoverInterrupted(host: RecoveryHost, between: () => Promise<boolean>, page = 256): Promise<number> {
  const { store, log } = host;
  let marked = 0;
  await tolerate(log, "interrupted turns", async () => {
    for await (const { entries, upTo } of pagesOf<SessionRecord>(store, keys.sessionPrefix, page)) {
      for (const { value: record } of entries) {
        if (record.status !== "running" || host.ours(record.id)) continue;
        await tolerate(log, `session ${record.id}`, async () => {
          await host.get(record.id).catch((err: unknown) => {
            throw err instanceof RpcError ? new StoreDamagedError(store.dir, err.message) : err;
          });
          marked++;
        });
      }
      if (upTo === undefined || !(await between())) return;
    }
  });
  return marked;
}
