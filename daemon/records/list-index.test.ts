import assert from "node:assert/strict";
import { test } from "node:test";
import { firstListings, sortKey, type Listing } from "./list-index.js";

const listing = (id: string, updatedAt: string): Listing => ({ sortKey: sortKey({ id, updatedAt }), entry: { sessionId: id, cwd: "/w", updatedAt } });

test("firstListings is the head of the whole list sorted, for any order of the live ones", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let round = 0; round < 200; round++) {
    const all = Array.from({ length: Math.floor(random() * 120) }, (_, i) =>
      listing(`s${i}`, new Date(1_700_000_000_000 + Math.floor(random() * 50) * 1000).toISOString()),
    );
    const sorted = [...all].sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
    const stored = sorted.filter(() => random() < 0.3);
    const live = all.filter((l) => !stored.includes(l));
    const limit = 1 + Math.floor(random() * 60);
    const head = sorted.slice(0, limit);
    assert.deepEqual(
      firstListings(stored.slice(0, limit + 1), live, limit).map((l) => l.entry.sessionId),
      head.map((l) => l.entry.sessionId),
    );
  }
});

test("newest first, then by id; the stored page is never changed", () => {
  const stored = [listing("b", "2026-12-02T00:00:02.000Z")];
  const live = [listing("c", "2026-12-02T00:00:01.000Z"), listing("a", "2026-12-02T00:00:02.000Z"), listing("d", "2026-12-02T00:00:03.000Z")];
  assert.deepEqual(
    firstListings(stored, live, 3).map((l) => l.entry.sessionId),
    ["d", "a", "b"],
  );
  assert.equal(stored.length, 1);
});
