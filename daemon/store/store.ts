/**
 * The LevelDB store (DESIGN §5). Its LOCK file is also the daemon election: a second daemon that
 * opens the same folder gets LEVEL_LOCKED and leaves.
 *
 * Keyspace (bytewise order, fixed-width numbers so ranges sort numerically):
 *   session!<id>              -> SessionRecord
 *   event!<id>!<seq:12>       -> LedgerEntry
 *   history!<id>!<n:12>       -> a model conversation message
 * The inbox keeps its own keys beside these (inbox/inbox.ts): inboxhead!<id> (order, pause,
 * recovery), inbox!<id>!<itemId> (items) and idem!<id>!<key> (idempotency receipts).
 */
import { Level } from "level";

export class StoreLockedError extends Error {
  override name = "StoreLockedError";
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface BatchOp {
  type: "put" | "del";
  key: string;
  value?: unknown;
}

const pad = (n: number): string => n.toString().padStart(12, "0");
export const keys = {
  session: (id: string) => `session!${id}`,
  event: (id: string, seq: number) => `event!${id}!${pad(seq)}`,
  eventPrefix: (id: string) => `event!${id}!`,
  history: (id: string, n: number) => `history!${id}!${pad(n)}`,
  historyPrefix: (id: string) => `history!${id}!`,
  sessionPrefix: "session!",
};

export class Store {
  private constructor(private readonly db: Level<string, unknown>) {}

  static async open(dir: string): Promise<Store> {
    const db = new Level<string, unknown>(dir, { valueEncoding: "json" });
    try {
      await db.open();
    } catch (err) {
      const e = err as { code?: string; cause?: { code?: string } };
      if (e.code === "LEVEL_LOCKED" || e.cause?.code === "LEVEL_LOCKED") {
        throw new StoreLockedError(`the store at ${dir} is locked by another daemon`);
      }
      throw err;
    }
    return new Store(db);
  }

  get isOpen(): boolean {
    return this.db.status === "open";
  }

  async get<T>(key: string): Promise<T | undefined> {
    return (await this.db.get(key)) as T | undefined;
  }

  async batch(ops: BatchOp[], sync: boolean): Promise<void> {
    if (ops.length === 0) return;
    const chained = this.db.batch();
    for (const op of ops) {
      if (op.type === "put") chained.put(op.key, op.value);
      else chained.del(op.key);
    }
    await chained.write({ sync } as never);
  }

  /** Values of every key starting with `prefix`, in key order. */
  async range<T>(prefix: string, opts: { from?: string; limit?: number; reverse?: boolean } = {}): Promise<Array<{ key: string; value: T }>> {
    const out: Array<{ key: string; value: T }> = [];
    const it = this.db.iterator({
      gte: opts.from ?? prefix,
      lt: `${prefix}\xff`,
      limit: opts.limit ?? -1,
      reverse: opts.reverse ?? false,
    });
    for await (const [key, value] of it) out.push({ key, value: value as T });
    return out;
  }

  async deletePrefix(prefix: string): Promise<void> {
    await this.db.clear({ gte: prefix, lt: `${prefix}\xff` });
  }

  async close(): Promise<void> {
    if (this.db.status === "open" || this.db.status === "opening") await this.db.close();
  }
}
