import { test } from "node:test";
import assert from "node:assert/strict";
import { ConfigError, ConfigFile, parseConfigText, resolveConfig } from "./config.js";

test("unknown keys are refused by name", () => {
  assert.throws(
    () => parseConfigText('{"modle":"x"}', "config.json"),
    (e: unknown) => e instanceof ConfigError && /"modle"/.test(e.message),
  );
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
  assert.throws(
    () => resolveConfig({ searchTimeoutSeconds: 30 }, { REASONIX_SEARCH_TIMEOUT_SECONDS: "0" }),
    /REASONIX_SEARCH_TIMEOUT_SECONDS="0"/,
    "a bad value is an error, never silently ignored",
  );
});

test("environment overrides go through the same schema: a bad value is an error naming the variable", () => {
  assert.throws(
    () => resolveConfig({}, { REASONIX_MAX_STEPS: "abc" }),
    (e: Error) => e instanceof ConfigError && /REASONIX_MAX_STEPS="abc": .*\(it sets maxSteps\)/.test(e.message),
  );
  assert.throws(() => resolveConfig({}, { REASONIX_BUDGET_TOKENS: "-5" }), /REASONIX_BUDGET_TOKENS="-5"/);
  assert.throws(() => resolveConfig({}, { REASONIX_DISPLAY_CURRENCY: "EUR" }), /REASONIX_DISPLAY_CURRENCY="EUR"/);
  const c = resolveConfig(
    { budgets: { seconds: 60 }, goal: { maxTurns: 3 } },
    { REASONIX_BUDGET_TOKENS: "1000", REASONIX_GOAL_MAX_SECONDS: "90", REASONIX_MODEL: "deepseek/deepseek-v4-pro" },
  );
  assert.deepEqual(c.budgets, { seconds: 60, tokens: 1000 });
  assert.deepEqual(c.goal, { maxTurns: 3, maxSeconds: 90 });
  assert.equal(c.defaultModel, "deepseek/deepseek-v4-pro");
});

test("webFetch.allowPrivateNetwork is off unless the file turns it on; other keys under it are refused", () => {
  assert.deepEqual(resolveConfig({}, {}).webFetch, { allowPrivateNetwork: false });
  assert.deepEqual(resolveConfig(parseConfigText('{"webFetch":{"allowPrivateNetwork":true}}', "config.json"), {}).webFetch, { allowPrivateNetwork: true });
  assert.throws(() => parseConfigText('{"webFetch":{"allowPrivate":true}}', "config.json"), /allowPrivate/);
});

test("compaction settings: defaults, file values, and ratios that cannot work are refused", () => {
  assert.deepEqual(resolveConfig({}, {}).compaction, { auto: true, ratio: 0.8, keepRatio: 0.25 });
  assert.deepEqual(resolveConfig(parseConfigText('{"compaction":{"ratio":0.7}}', "config.json"), {}).compaction, { auto: true, ratio: 0.7, keepRatio: 0.25 });
  assert.throws(() => parseConfigText('{"compaction":{"ratio":1.5}}', "config.json"), /compaction\.ratio/);
  assert.throws(() => parseConfigText('{"compaction":{"ratio":0.5,"keepRatio":0.45}}', "config.json"), /keepRatio must stay/);
  assert.throws(() => parseConfigText('{"compaction":{"when":"always"}}', "config.json"), /"when"/);
  const file = parseConfigText(
    JSON.stringify({ providers: [{ name: "local", baseUrl: "http://127.0.0.1:1/v1", apiKeyEnv: "K", models: ["m"], contextWindow: 8000 }] }),
    "config.json",
  );
  assert.equal(file.providers?.[0]?.contextWindow, 8000);
  assert.throws(
    () => parseConfigText('{"providers":[{"name":"x","baseUrl":"http://h/","apiKeyEnv":"K","models":["m"],"contextWindow":0}]}', "c"),
    /contextWindow/,
  );
});

test("the subagent's bounds have defaults and take partial overrides; unknown keys are refused", () => {
  assert.deepEqual(resolveConfig({}, {}).subagent, { maxSteps: 20, maxTokens: 400_000, seconds: 600 });
  assert.deepEqual(resolveConfig({ subagent: { seconds: 30 } }, {}).subagent, { maxSteps: 20, maxTokens: 400_000, seconds: 30 });
  assert.equal(ConfigFile.safeParse({ subagent: { steps: 3 } }).success, false);
});

test("the model's idle watchdog and retries: defaults, file values, environment overrides", () => {
  const d = resolveConfig({}, {});
  assert.equal(d.modelIdleTimeoutSeconds, 120);
  assert.deepEqual(d.modelRetry, { retries: 4, baseSeconds: 1, maxSeconds: 60 });
  const c = resolveConfig(
    { modelIdleTimeoutSeconds: 90, modelRetry: { retries: 2 } },
    { REASONIX_MODEL_IDLE_TIMEOUT_SECONDS: "0.5", REASONIX_MODEL_RETRY_BASE_SECONDS: "0.01" },
  );
  assert.equal(c.modelIdleTimeoutSeconds, 0.5);
  assert.deepEqual(c.modelRetry, { retries: 2, baseSeconds: 0.01, maxSeconds: 60 });
  assert.throws(() => resolveConfig({}, { REASONIX_MODEL_IDLE_TIMEOUT_SECONDS: "never" }), /REASONIX_MODEL_IDLE_TIMEOUT_SECONDS="never"/);
  assert.throws(() => parseConfigText('{"modelRetry":{"retries":-1}}', "config.json"), /modelRetry\.retries/);
});

test("retention: durations with a unit, both rules optional, none by default; bad values are refused by place", () => {
  assert.deepEqual(resolveConfig({}, {}).retention, {});
  const c = resolveConfig(parseConfigText('{"retention":{"olderThan":"90d","empty":"12h"}}', "config.json"), {});
  assert.deepEqual(c.retention, { olderThanMs: 90 * 86_400_000, emptyMs: 12 * 3_600_000 });
  assert.deepEqual(resolveConfig(parseConfigText('{"retention":{"empty":"1d"}}', "config.json"), {}).retention, { emptyMs: 86_400_000 });
  assert.throws(() => parseConfigText('{"retention":{"olderThan":"90"}}', "config.json"), /retention\.olderThan: not a duration/);
  assert.throws(() => parseConfigText('{"retention":{"olderThan":90}}', "config.json"), /retention\.olderThan/);
  assert.throws(() => parseConfigText('{"retention":{"empty":"0d"}}', "config.json"), /retention\.empty: not a duration/);
  assert.throws(() => parseConfigText('{"retention":{"days":30}}', "config.json"), /"days" at retention/);
});

test("detachedTurns: hold by default, continue or cancel from the file or the environment, nothing else", () => {
  assert.equal(resolveConfig({}, {}).detachedTurns, "hold");
  assert.equal(resolveConfig(parseConfigText('{"detachedTurns":"continue"}', "config.json"), {}).detachedTurns, "continue");
  assert.equal(resolveConfig({ detachedTurns: "continue" }, { REASONIX_DETACHED_TURNS: "cancel" }).detachedTurns, "cancel");
  assert.throws(() => parseConfigText('{"detachedTurns":"wait"}', "config.json"), /detachedTurns/);
  assert.throws(() => resolveConfig({}, { REASONIX_DETACHED_TURNS: "stop" }), /REASONIX_DETACHED_TURNS="stop"/);
});
