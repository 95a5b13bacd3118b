import { test } from "node:test";
import assert from "node:assert/strict";
import { effortLevels, effortParams } from "./effort.js";

test("auto leaves the provider's defaults; DeepSeek levels map to thinking and reasoning_effort", () => {
  assert.deepEqual(effortParams("deepseek", "auto"), {});
  assert.deepEqual(effortParams("deepseek", "off"), { thinking: { type: "disabled" } });
  assert.deepEqual(effortParams("deepseek", "max"), { thinking: { type: "enabled" }, reasoning_effort: "max" });
  assert.deepEqual(effortParams("ollama", "medium"), { reasoning_effort: "medium" });
  assert.deepEqual(effortParams("ollama", "max"), {});
  assert.ok(effortLevels("deepseek").includes("auto"));
});
