/**
 * A long range read page after page through one LevelDB iterator (session/load's replay), each
 * value as its JSON text once its checksum passes, unparsed.
 *
 * One iterator, not one per page: classic-level keeps an iterator's last page (its keys and values
 * as C++ strings) until the garbage collector finalizes the iterator's handle, closed or not, and
 * a handle weighs nothing to V8, so an iterator per page of a 100,000-record replay left hundreds
 * of pages behind in the threads' malloc arenas (some 37 MB, still resident seconds after). One
 * iterator reuses one page's worth of native memory.
 *
 * The iterator reads the store as it was when it opened: once it runs out, the next read opens a
 * fresh one after the last key, which sees what was written since. A reopen of the store closes
 * every iterator (recovery.ts); the read after it opens a fresh one at the same place.
 */
import { DAMAGED, verifiedJson } from "./codec.js";

/**
 * A page as the iterator made it: each `[key, value]` pair it read, the value replaced in place by
 * its JSON text (undefined: damaged). No object is made per record: in a long replay the page read
 * ahead is alive when the young generation is collected, and V8 then judged the allocation site
 * of a `{ key, json }` per record long-lived ("tenure") in most fresh daemons; from then on every
 * page went straight to the old generation and each collection copied what it pointed to
 * (docs/benchmarks.md). Pairs made by the iterator's native code carry no such site.
 */
export type JsonPage = Array<[key: string, json: string | undefined]>;

/** The part of a classic-level iterator the cursor uses. */
export interface TextIterator {
  nextv(size: number): Promise<Array<[string, string]>>;
  close(): Promise<void>;
}

/** What the cursor needs of the store. */
export interface CursorHost {
  /** Runs a read as the store's other reads run: after a reopen under way, and counted (store.ts). */
  read<T>(fn: () => Promise<T>): Promise<T>;
  /** Bumped at every reopen: an iterator from before it is closed. */
  generation(): number;
  /** A text-valued iterator over the range from `gte` (or past `gt`) on. */
  open(bound: { gte: string } | { gt: string }): TextIterator;
  damaged(key: string): void;
}

export class JsonCursor {
  private it: TextIterator | undefined;
  private itGeneration = -1;
  private after: string | undefined;
  private closed = false;

  constructor(
    private readonly host: CursorHost,
    private readonly from: string,
    private readonly limit: number,
  ) {}

  /**
   * The next page: up to `limit` values (or fewer, once a page's bytes pass the store's bound),
   * empty when the range has no more now. A value that fails its checksum is recorded as damage
   * and comes back without its text, so the caller still knows how far the page read.
   */
  next(): Promise<JsonPage> {
    return this.host.read(async () => {
      if (this.closed) return [];
      if (this.it && this.itGeneration !== this.host.generation()) await this.drop().catch(() => undefined);
      let entries = this.it ? await this.it.nextv(this.limit) : [];
      // Run out, or none yet: a fresh iterator from where the last one stopped sees what was written since.
      if (entries.length === 0) {
        await this.drop();
        this.it = this.host.open(this.after === undefined ? { gte: this.from } : { gt: this.after });
        this.itGeneration = this.host.generation();
        entries = await this.it.nextv(this.limit);
        if (entries.length === 0) {
          await this.drop();
          return [];
        }
      }
      this.after = entries[entries.length - 1]![0];
      const page = entries as JsonPage;
      for (const entry of page) {
        const json = verifiedJson(entry[1]!);
        if (json !== DAMAGED) entry[1] = json;
        else {
          this.host.damaged(entry[0]);
          entry[1] = undefined;
        }
      }
      return page;
    });
  }

  /** Call once done; a read under way finishes first. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drop();
  }

  private async drop(): Promise<void> {
    const it = this.it;
    this.it = undefined;
    await it?.close();
  }
}
