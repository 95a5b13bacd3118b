import assert from "node:assert/strict";
import { test } from "node:test";
import { turnStartSlot } from "./turn-start.js";

test("turn starts asked for together resolve in order, each in an event-loop turn of its own", async () => {
  // A ticker that counts event-loop turns: two starts in one turn would read the same count.
  let turns = 0;
  let ticking = true;
  const tick = (): void => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const seen: Array<{ start: number; turn: number }> = [];
  await Promise.all([0, 1, 2, 3].map((start) => turnStartSlot().then(() => seen.push({ start, turn: turns }))));
  ticking = false;
  assert.deepEqual(
    seen.map((s) => s.start),
    [0, 1, 2, 3],
  );
  // Strictly increasing: no two starts shared an event-loop turn.
  const at = seen.map((s) => s.turn);
  assert.deepEqual(
    at,
    [...new Set(at)].sort((a, b) => a - b),
  );
});
