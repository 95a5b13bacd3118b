/**
 * The LevelDB store (DESIGN §5). Its LOCK file is also the daemon election: a second daemon that
 * opens the same folder gets LEVEL_LOCKED and leaves.
 *
 * Every kind of key is declared in keyspace.ts (bytewise order, fixed-width numbers so ranges sort
 * numerically); `keys` here are the builders for the session's record, ledger and history.
 *
 * Writes go through one queue, one LevelDB write at a time (batches queued meanwhile are merged, so
 * concurrent sessions still share an fsync). After a failed write LevelDB's log may end in a torn
 * record, and anything appended behind it would be dropped at the next open ("checksum mismatch"):
 * so the first failure stops all writing, and writing resumes only after the database has been
 * closed and opened again, which starts a fresh log (recovery.ts). Until then every write fails at
 * once with the same readable cause; reads go on. The folder itself is watched (folder.ts): one
 * removed, replaced or made unwritable under the daemon fails the store the same way.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Level } from "level";
import type { Logger } from "../log/log.js";
import { checkedJson, DAMAGED, encodeValue } from "./codec.js";
import { JsonCursor } from "./cursor.js";
import { StoreDamagedError, StoreWriteError } from "./errors.js";
import { StoreFolder } from "./folder.js";
import { keyspace, pastPrefix, sessionOfKey } from "./keyspace.js";
import { Recovery } from "./recovery.js";
import { errorText } from "../../shared/error-text.js";

export { StoreDamagedError, StoreWriteError } from "./errors.js";
export { pastPrefix, sessionOfKey } from "./keyspace.js";
export type { JsonCursor, JsonPage } from "./cursor.js";

export class StoreLockedError extends Error {
  override name = "StoreLockedError";
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface BatchOp {
  type: "put" | "del";
  key: string;
  value?: unknown;
}

/** One thing found wrong with stored data; `sessionId` when the key says whose it is. */
export interface DamageEntry {
  sessionId?: string;
  where: string;
  detail: string;
  at: string;
}

export interface StoreHealth {
  path: string;
  writable: boolean;
  failure?: string;
  damage: DamageEntry[];
}

const { session, event, history } = keyspace;
export const keys = {
  session: (id: string) => session.key(id),
  event: (id: string, seq: number) => event.key(id, seq),
  eventPrefix: (id: string) => event.range(id),
  history: (id: string, n: number) => history.key(id, n),
  historyPrefix: (id: string) => history.range(id),
  sessionPrefix: session.range(),
};

const MAX_DAMAGE_ENTRIES = 200;

/** A batch op whose value is already encoded, so writing it cannot fail on the value. */
interface EncodedOp {
  type: "put" | "del";
  key: string;
  value?: string;
}

interface QueuedBatch {
  ops: EncodedOp[];
  sync: boolean;
  resolve(): void;
  reject(err: Error): void;
}

function isCorruption(err: unknown): boolean {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return e?.code === "LEVEL_CORRUPTION" || e?.cause?.code === "LEVEL_CORRUPTION" || /Corruption/.test(`${e?.message} ${e?.cause?.message}`);
}

/** Lines LevelDB writes to its own LOG when it drops data during recovery. */
function droppedDataLines(dir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, "LOG"), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => /dropping \d+ bytes|Corruption|ignoring error/i.test(line))
    .map((line) => line.replace(/^\S+ \S+ /, "").trim());
}

export class Store {
  private queue: QueuedBatch[] = [];
  private writing = false;
  private closed = false;
  private reopening: Promise<void> | undefined;
  private reads = 0;
  /** Bumped at every reopen, which closes every iterator (cursor.ts). */
  private generation = 0;
  private readsIdle: Array<() => void> = [];
  private readonly damageByKey = new Map<string, DamageEntry>();
  private readonly recovery: Recovery;

  private constructor(
    private readonly db: Level<string, unknown>,
    readonly dir: string,
    private readonly log: Logger | undefined,
    folder: StoreFolder,
  ) {
    this.recovery = new Recovery(folder, log, {
      isClosed: () => this.closed,
      reopen: () => this.reopen(),
      resumed: () => {
        if (this.queue.length > 0) this.startPump();
      },
    });
  }

  static async open(dir: string, log?: Logger): Promise<Store> {
    const db = new Level<string, unknown>(dir, { valueEncoding: checkedJson });
    try {
      await db.open();
    } catch (err) {
      const e = err as { code?: string; cause?: { code?: string } };
      if (e.code === "LEVEL_LOCKED" || e.cause?.code === "LEVEL_LOCKED") {
        throw new StoreLockedError(`the store at ${dir} is locked by another daemon`);
      }
      if (isCorruption(err)) throw new StoreDamagedError(dir, errorText(e.cause ?? err));
      throw err;
    }
    let folder: StoreFolder;
    try {
      folder = StoreFolder.capture(dir);
    } catch (err) {
      await db.close();
      throw err;
    }
    const store = new Store(db, dir, log, folder);
    store.noteRecoveryLog();
    return store;
  }

  get isOpen(): boolean {
    return this.db.status === "open";
  }

  /** The cause every write fails with until the store is writable again; undefined when healthy. */
  get failure(): StoreWriteError | undefined {
    return this.recovery.failure;
  }

  health(): StoreHealth {
    const failure = this.recovery.failure;
    return {
      path: this.dir,
      writable: failure === undefined,
      ...(failure ? { failure: failure.message } : {}),
      damage: [...this.damageByKey.values()],
    };
  }

  /** Damage recorded against one session (empty when none). */
  damageOf(sessionId: string): DamageEntry[] {
    return [...this.damageByKey.values()].filter((d) => d.sessionId === sessionId);
  }

  /** Records something found wrong with stored data, once, in the log and in health(). */
  noteDamage(where: string, detail: string, sessionId?: string): void {
    const id = `${where}\0${detail}`;
    if (this.damageByKey.has(id) || this.damageByKey.size >= MAX_DAMAGE_ENTRIES) return;
    const entry: DamageEntry = { ...(sessionId ? { sessionId } : {}), where, detail, at: new Date().toISOString() };
    this.damageByKey.set(id, entry);
    this.log?.error({ store: this.dir, ...entry }, "store damage");
  }

  /** Called once the store takes writes again after a failure. */
  onRecovered(listener: () => void): () => void {
    return this.recovery.onRecovered(listener);
  }

  /** Tries a failed store again now instead of at the next poll (recovery.ts); `failure` tells how it went. */
  retryNow(): Promise<void> {
    return this.recovery.retryNow();
  }

  async get<T>(key: string): Promise<T | undefined> {
    const value = await this.read(() => this.db.get(key));
    if (value === DAMAGED) {
      this.noteDamage(key, "the stored value fails its checksum", sessionOfKey(key));
      throw new StoreDamagedError(this.dir, `the value of ${key} fails its checksum`);
    }
    return value as T | undefined;
  }

  /**
   * Values of every key starting with `prefix`, in key order. A value that fails its checksum is
   * left out and recorded as damage; callers that need every entry see the hole in the keys.
   */
  async range<T>(prefix: string, opts: { from?: string; before?: string; limit?: number; reverse?: boolean } = {}): Promise<Array<{ key: string; value: T }>> {
    return this.read(async () => {
      const out: Array<{ key: string; value: T }> = [];
      const lt = opts.before ?? (prefix ? pastPrefix(prefix) : undefined);
      const it = this.db.iterator({
        gte: opts.from ?? prefix,
        ...(lt !== undefined ? { lt } : {}),
        limit: opts.limit ?? -1,
        reverse: opts.reverse ?? false,
      });
      for await (const [key, value] of it) {
        if (value === DAMAGED) this.noteDamage(key, "the stored value fails its checksum", sessionOfKey(key));
        else out.push({ key, value: value as T });
      }
      return out;
    });
  }

  /** `prefix`'s values from `from` on as checked JSON text, a page of up to `limit` or about `maxBytes` at a time (cursor.ts). */
  jsonCursor(prefix: string, opts: { from?: string; limit: number; maxBytes: number }): JsonCursor {
    const lt = pastPrefix(prefix);
    return new JsonCursor(
      {
        read: (fn) => this.read(fn),
        generation: () => this.generation,
        open: (bound) => this.db.iterator<string, string>({ ...bound, lt, valueEncoding: "utf8", highWaterMarkBytes: opts.maxBytes }),
        damaged: (key) => this.noteDamage(key, "the stored value fails its checksum", sessionOfKey(key)),
      },
      opts.from ?? prefix,
      opts.limit,
    );
  }

  /**
   * Keys only, for integrity scans and prefix deletes; every key of the store for "". `from`,
   * `before` and `limit` narrow the prefix's range to a slice, so a long range is read piece by piece.
   */
  async keysOf(prefix: string, slice: { from?: string; before?: string; limit?: number } = {}): Promise<string[]> {
    return this.read(async () => {
      const out: string[] = [];
      const gte = slice.from ?? prefix;
      const lt = slice.before ?? (prefix ? pastPrefix(prefix) : undefined);
      for await (const key of this.db.keys({ ...(gte ? { gte } : {}), ...(lt !== undefined ? { lt } : {}), limit: slice.limit ?? -1 })) out.push(key);
      return out;
    });
  }

  /**
   * One atomic batch; with sync, resolved only once it is on disk. Rejects with StoreWriteError. A
   * batch that finds the store failed first tries it again at once: space may be back already.
   */
  batch(ops: BatchOp[], sync: boolean): Promise<void> {
    if (ops.length === 0) return Promise.resolve();
    // A value that cannot be encoded (too deep, a cycle) is its caller's error, not a store failure:
    // it must never reach the shared write and stop every session's writes.
    let encoded: EncodedOp[];
    try {
      encoded = ops.map((op) => (op.type === "put" ? { type: "put", key: op.key, value: encodeValue(op.value) } : { type: "del", key: op.key }));
    } catch (err) {
      return Promise.reject(new Error(`a value could not be stored: ${errorText(err)}`));
    }
    if (!this.recovery.failure) return this.enqueue(encoded, sync);
    return this.recovery.retryNow().then(() => {
      const failure = this.recovery.failure;
      return failure ? Promise.reject(failure) : this.enqueue(encoded, sync);
    });
  }

  private enqueue(ops: EncodedOp[], sync: boolean): Promise<void> {
    if (this.closed) return Promise.reject(new StoreWriteError(`the store at ${this.dir} is closed`, false));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ops, sync, resolve, reject });
      this.startPump();
    });
  }

  async deletePrefix(prefix: string): Promise<void> {
    const found = await this.keysOf(prefix);
    for (let i = 0; i < found.length; i += 1000) {
      await this.batch(
        found.slice(i, i + 1000).map((key) => ({ type: "del" as const, key })),
        false,
      );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.recovery.stop();
    while (this.writing) await new Promise((r) => setImmediate(r));
    if (this.db.status === "open" || this.db.status === "opening") await this.db.close();
  }

  /**
   * The writer starts once this turn of the event loop is over, so that the batches handed in
   * meanwhile go to LevelDB as one write: every session's timed flush falls due together
   * (writer.ts), and a write's fixed cost is most of what a streamed chunk cost the store.
   */
  private startPump(): void {
    if (this.writing) return;
    this.writing = true;
    setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    this.writing = true;
    // Nothing goes into a folder that is no longer the store's, and nothing written while it went is acknowledged.
    while (this.queue.length > 0 && !this.recovery.failure && !this.recovery.checkFolder()) {
      const group = this.queue.splice(0);
      try {
        const chained = this.db.batch();
        for (const { ops } of group) {
          for (const op of ops) {
            if (op.type === "put") chained.put(op.key, op.value, { valueEncoding: "utf8" });
            else chained.del(op.key);
          }
        }
        await chained.write({ sync: group.some((g) => g.sync) } as never);
        const lost = this.recovery.checkFolder();
        if (lost) throw lost;
        for (const g of group) g.resolve();
      } catch (err) {
        const failure = err instanceof StoreWriteError ? err : this.recovery.fromWrite(err);
        for (const g of group) g.reject(failure);
      }
    }
    const failure = this.recovery.failure;
    if (failure) for (const g of this.queue.splice(0)) g.reject(failure);
    this.writing = false;
  }

  private async reopen(): Promise<void> {
    const run = async (): Promise<void> => {
      while (this.reads > 0) await new Promise<void>((r) => this.readsIdle.push(r));
      this.generation++;
      await this.db.close();
      // Never created afresh: a folder that went missing meanwhile fails the reopen instead.
      await this.db.open({ createIfMissing: false });
      this.noteRecoveryLog();
    };
    this.reopening = run();
    try {
      await this.reopening;
    } finally {
      this.reopening = undefined;
    }
  }

  /** Reads wait out a reopen, and a reopen waits for the reads under way. */
  private async read<T>(fn: () => Promise<T>): Promise<T> {
    while (this.reopening) await this.reopening.catch(() => undefined);
    this.reads++;
    try {
      return await fn();
    } catch (err) {
      if (isCorruption(err)) {
        const detail = errorText(err);
        this.noteDamage(this.dir, detail);
        throw new StoreDamagedError(this.dir, detail);
      }
      throw err;
    } finally {
      if (--this.reads === 0) for (const wake of this.readsIdle.splice(0)) wake();
    }
  }

  /** What LevelDB dropped while recovering its log at open: it says so only in its own LOG file. */
  private noteRecoveryLog(): void {
    for (const line of droppedDataLines(this.dir)) this.noteDamage(join(this.dir, "LOG"), line);
  }
}
