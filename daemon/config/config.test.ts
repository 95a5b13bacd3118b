import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, parseConfigText, resolveConfig } from "./config.js";

test("unknown keys are refused by name", () => {
  assert.throws(() => parseConfigText('{"modle":"x"}', "config.json"), (e: unknown) => e instanceof ConfigError && /"modle"/.test(e.message));
  assert.throws(() => parseConfigText("{", "config.json"), ConfigError);
});

test("defaults, file values and environment overrides", () => {
  const file = parseConfigText(
    JSON.stringify({ providers: [{ name: "local", baseUrl: "http://127.0.0.1:11434/v1", apiKeyEnv: "LOCAL_API_KEY", models: ["qwen"] }], maxSteps: 7 }),
    "config.json",
  );
  const c = resolveConfig(file, { REASONIX_MAX_STEPS: "3" });
  assert.equal(c.providers[0]!.name, "deepseek");
  assert.equal(c.providers[1]!.name, "local");
  assert.equal(c.maxSteps, 3);
  assert.equal(c.defaultModel, "deepseek/deepseek-v4-flash");
  assert.equal(resolveConfig({}, {}).maxSteps, 50);
  assert.equal(resolveConfig({}, {}).searchTimeoutSeconds, 10);
  assert.equal(resolveConfig({ searchTimeoutSeconds: 30 }, { REASONIX_SEARCH_TIMEOUT_SECONDS: "2" }).searchTimeoutSeconds, 2);
  assert.equal(resolveConfig({ searchTimeoutSeconds: 30 }, { REASONIX_SEARCH_TIMEOUT_SECONDS: "0" }).searchTimeoutSeconds, 30);
});
