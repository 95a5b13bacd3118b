import { test } from "node:test";
import assert from "node:assert/strict";
import { parseDuration } from "./duration.js";

test("durations: a whole number and s, m, h or d", () => {
  assert.equal(parseDuration("30d"), 30 * 86_400_000);
  assert.equal(parseDuration("12h"), 12 * 3_600_000);
  assert.equal(parseDuration("5m"), 300_000);
  assert.equal(parseDuration("2s"), 2000);
  assert.equal(parseDuration(" 1d "), 86_400_000);
});

test("durations: anything else is refused, zero too", () => {
  for (const bad of ["", "30", "d", "30x", "1.5d", "-1d", "0s", "30 d", "30D", "1w", "1e3s", "9999999999d"]) {
    assert.equal(parseDuration(bad), undefined, bad);
  }
});
