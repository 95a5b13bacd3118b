/**
 * A long range read a page at a time, so a walk over every session holds one page in memory and
 * can pause between pages. The page's keys are read first: a value that fails its checksum is left
 * out of `range` (and recorded), but still counts in its page, so a short page is the last one.
 */
import type { Store } from "./store.js";

export interface Page<T> {
  entries: Array<{ key: string; value: T }>;
  /** The last key of the page before; undefined on the first. */
  after: string | undefined;
  /** This page's last key; undefined on the last page. */
  upTo: string | undefined;
}

export async function* pagesOf<T>(store: Store, prefix: string, size: number): AsyncGenerator<Page<T>> {
  let after: string | undefined;
  for (;;) {
    const from = after === undefined ? {} : { from: `${after}\u0000` };
    const page = await store.keysOf(prefix, { ...from, limit: size });
    const upTo = page.length < size ? undefined : page.at(-1)!;
    const entries = await store.range<T>(prefix, { ...from, ...(upTo === undefined ? {} : { before: `${upTo}\u0000` }) });
    yield { entries, after, upTo };
    if (upTo === undefined) return;
    after = upTo;
  }
}
