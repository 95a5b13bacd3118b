/**
 * Removing sessions nobody uses any more. One-shot clients (`acpx exec`, an SDK call) make a session
 * each and never come back; without this the store and `session/list` only ever grow. Two ways in:
 * `reasonix sessions prune` (the `_reasonix.io/sessions/prune` method) and the `retention` config
 * key, applied at start and then periodically. Both remove a session exactly as session/delete does
 * (`SessionManager.delete`), and neither ever touches one in use: a window attached, a turn running
 * or held, a question pending, a background job running, work queued in its inbox.
 *
 * Last activity is the record's `updatedAt`: set when the session is created and when each of its
 * turns starts and ends. A session is empty when nobody ever prompted it: its ledger holds no
 * `user_message_chunk` (every prompt, a slash command too, records one and names the session from
 * its text, so an empty session also has no title).
 */
import type { Logger } from "../log/log.js";
import { keys, type Store } from "../store/store.js";
import type { LedgerEntry, SessionRecord } from "./types.js";
import { errorText } from "../../shared/error-text.js";

export interface PruneFilter {
  /** Only sessions whose last activity is older than this. */
  olderThanMs?: number | undefined;
  /** Only sessions nobody ever prompted. */
  empty?: boolean | undefined;
  /** Only sessions in this working directory. */
  cwd?: string | undefined;
}

export interface PrunedSession {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt: string;
  empty: boolean;
}

export interface PruneResult {
  dryRun: boolean;
  /** Removed (with dryRun: would be), oldest first. */
  removed: PrunedSession[];
  /** Matched, but in use: left alone, with the reason. */
  kept: Array<PrunedSession & { reason: string }>;
}

/** What pruning needs of the session manager. */
export interface PruneHost {
  readonly store: Store;
  /** The live session's record (newer than the stored one), if it is live. */
  liveRecord(id: string): SessionRecord | undefined;
  /** Why the session may not be removed now; undefined when nothing uses it. */
  inUse(id: string): Promise<string | undefined>;
  /** Removes it as session/delete does, unless it is in use; then the reason, and nothing removed. */
  removeUnused(id: string): Promise<string | undefined>;
}

async function hasUserMessage(store: Store, id: string): Promise<boolean> {
  const ledger = await store.range<LedgerEntry>(keys.eventPrefix(id));
  return ledger.some((e) => e.value.type === "update" && e.value.update.sessionUpdate === "user_message_chunk");
}

/** Every stored session the filter names, removed unless in use (or only listed, with dryRun). */
export async function pruneSessions(host: PruneHost, filter: PruneFilter, opts: { dryRun: boolean; now: number; stop?: () => boolean }): Promise<PruneResult> {
  const cutoff = filter.olderThanMs === undefined ? undefined : opts.now - filter.olderThanMs;
  const matched: PrunedSession[] = [];
  for (const { value: stored } of await host.store.range<SessionRecord>(keys.sessionPrefix)) {
    const record = host.liveRecord(stored.id) ?? stored;
    if (filter.cwd !== undefined && record.cwd !== filter.cwd) continue;
    // A date that does not parse is never "older": such a session is kept.
    if (cutoff !== undefined && !(Date.parse(record.updatedAt) < cutoff)) continue;
    // Only a session without a title can be empty, and its ledger is a few records at most.
    const empty = record.title === undefined && !(await hasUserMessage(host.store, record.id));
    if (filter.empty && !empty) continue;
    matched.push({ sessionId: record.id, cwd: record.cwd, ...(record.title ? { title: record.title } : {}), updatedAt: record.updatedAt, empty });
  }
  matched.sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0));
  const result: PruneResult = { dryRun: opts.dryRun, removed: [], kept: [] };
  for (const session of matched) {
    if (opts.stop?.()) break;
    let reason: string | undefined;
    try {
      reason = opts.dryRun ? await host.inUse(session.sessionId) : await host.removeUnused(session.sessionId);
    } catch (err) {
      reason = `it could not be removed: ${errorText(err)}`;
    }
    if (reason) result.kept.push({ ...session, reason });
    else result.removed.push(session);
  }
  return result;
}

export interface RetentionRules {
  olderThanMs?: number;
  emptyMs?: number;
}

const HOUR_MS = 3_600_000;
/** With no rule set, how often config.json is looked at again for one. */
const IDLE_CHECK_MS = 60_000;

/**
 * The `retention` config key at work: a sweep at start, then one every quarter of the shortest
 * rule (at least every 0.5 s, at most hourly). The rules are read at each sweep, so a changed
 * config.json applies without a restart.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly host: PruneHost,
    private readonly rules: () => RetentionRules,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.timer || this.current || this.stopped) return;
    this.schedule(0);
  }

  /** No sweep starts after this; one under way stops before its next session and is waited for. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.current;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.current = this.sweep().finally(() => {
        this.current = undefined;
        if (!this.stopped) this.schedule(this.interval());
      });
    }, ms);
    this.timer.unref();
  }

  private interval(): number {
    const { olderThanMs, emptyMs } = this.rules();
    const shortest = Math.min(olderThanMs ?? Number.POSITIVE_INFINITY, emptyMs ?? Number.POSITIVE_INFINITY);
    if (!Number.isFinite(shortest)) return IDLE_CHECK_MS;
    return Math.min(HOUR_MS, Math.max(500, shortest / 4));
  }

  private async sweep(): Promise<void> {
    const { olderThanMs, emptyMs } = this.rules();
    const passes: Array<{ rule: "empty" | "olderThan"; limitMs: number; filter: PruneFilter }> = [];
    if (emptyMs !== undefined) passes.push({ rule: "empty", limitMs: emptyMs, filter: { empty: true, olderThanMs: emptyMs } });
    if (olderThanMs !== undefined) passes.push({ rule: "olderThan", limitMs: olderThanMs, filter: { olderThanMs } });
    for (const pass of passes) {
      if (this.stopped) return;
      try {
        const result = await pruneSessions(this.host, pass.filter, { dryRun: false, now: Date.now(), stop: () => this.stopped });
        for (const s of result.removed) {
          this.log.info(
            { sessionId: s.sessionId, cwd: s.cwd, updatedAt: s.updatedAt, rule: pass.rule, limitSeconds: pass.limitMs / 1000 },
            "retention removed a session",
          );
        }
        for (const s of result.kept) this.log.debug({ sessionId: s.sessionId, rule: pass.rule, reason: s.reason }, "retention kept a session in use");
      } catch (err) {
        this.log.warn({ rule: pass.rule, err }, "retention sweep failed");
      }
    }
  }
}
