import { test } from "node:test";
import assert from "node:assert/strict";
import { nextGoalStep } from "./goal.js";

const bounds = { maxTurns: 3, maxSeconds: 60 };
const now = Date.parse("2026-01-01T00:00:10Z");
const goal = (over: object = {}) => ({ text: "ship it", status: "active" as const, turns: 0, startedAt: "2026-01-01T00:00:00Z", ...over });

test("goal steps: continue, stop on done/blocked/cancel/bounds, yield to a queued prompt", () => {
  assert.deepEqual(nextGoalStep(goal(), "end_turn", 0, bounds, now), { action: "continue" });
  assert.equal(nextGoalStep(goal({ status: "complete", summary: "done" }), "end_turn", 0, bounds, now).action, "stop");
  assert.equal(nextGoalStep(goal({ status: "blocked" }), "end_turn", 0, bounds, now).action, "stop");
  assert.equal(nextGoalStep(goal(), "cancelled", 0, bounds, now).action, "stop");
  assert.deepEqual(nextGoalStep(goal(), "end_turn", 1, bounds, now), { action: "yield" });
  const bound = nextGoalStep(goal({ turns: 2 }), "end_turn", 0, bounds, now);
  assert.ok(bound.action === "stop" && /\[warning\]/.test(bound.message));
  const late = nextGoalStep(goal(), "end_turn", 0, bounds, now + 60_000);
  assert.ok(late.action === "stop" && /time bound/.test(late.message));
});
