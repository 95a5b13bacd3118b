import assert from "node:assert/strict";
import { test } from "node:test";
import { pacing } from "./pacing.js";

/** Session k's chunks written every `gap` ms from `start`, each delivered `delay(i)` ms later. */
function run(sessions: number, chunks: number, gap: number, delay: (k: number, i: number) => number): { sent: number[][]; got: number[][] } {
  const sent = Array.from({ length: sessions }, (_, k) => Array.from({ length: chunks }, (_, i) => 1000 + k * 3 + i * gap));
  const got = sent.map((times, k) => times.map((t, i) => t + delay(k, i)));
  return { sent, got };
}

test("delivery that keeps pace: same rate, flat delay, every session at 100 %", () => {
  const { sent, got } = run(10, 200, 5, () => 2);
  const p = pacing(sent, got);
  assert.equal(p.pairs, 2000);
  assert.ok(Math.abs(p.deliveredRate - p.sentRate) < 1e-6);
  assert.ok(Math.abs(p.worstSessionShare - 1) < 1e-9);
  assert.equal(p.delayGrowth, 0);
  assert.equal(p.sentGap, 5);
  assert.equal(p.delays[0], 2);
  assert.equal(p.delays.at(-1), 2);
});

test("delivery that falls behind shows as a lower rate, growing delay and a slow session", () => {
  // Session 0 gets each chunk 1 ms later than the one before: a backlog that grows for 200 chunks.
  const { sent, got } = run(10, 200, 5, (k, i) => (k === 0 ? 2 + i : 2));
  const p = pacing(sent, got);
  assert.ok(p.deliveredRate < p.sentRate, `${p.deliveredRate} < ${p.sentRate}`);
  assert.ok(p.worstSessionShare < 0.9, String(p.worstSessionShare));
  assert.ok(p.delays.at(-1)! >= 200);
  // The median session did not fall behind; the slow one is in the share and the delays.
  assert.equal(p.delayGrowth, 0);
});

test("a session with chunks missing is left out of the rates and delays but counted in pairs", () => {
  const { sent, got } = run(3, 10, 5, () => 1);
  got[2] = got[2]!.slice(0, 5);
  const p = pacing(sent, got);
  assert.equal(p.pairs, 25);
  assert.equal(p.delays.length, 20);
});
