import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { BIN } from "../support/harness.js";
import { refusedPort } from "../support/ports.js";
import { world, processTest } from "./fixture.js";

const run = promisify(execFile);

test("reasonix setup records an OpenAI-compatible provider and its key; --model selects it; the key stays out of sight", async (t) => {
  const { home, model, workdir, spawn } = await world(t, { noModel: true });
  const key = "local-secret-0123456789";
  await run(process.execPath, [BIN, "setup", "--provider", "local", "--base-url", model.url, "--models", "coder-small,coder-big", "--api-key", key], {
    env: { ...process.env, REASONIX_HOME: home.dir },
  });
  const config = JSON.parse(readFileSync(join(home.dir, "config.json"), "utf8"));
  assert.deepEqual(config.providers[0], { name: "local", baseUrl: model.url, apiKeyEnv: "LOCAL_API_KEY", models: ["coder-small", "coder-big"] });
  assert.ok(!JSON.stringify(config).includes(key));
  assert.equal(statSync(join(home.dir, "credentials.json")).mode & 0o777, 0o600);

  const agent = spawn({ args: ["--model", "local/coder-big"] });
  await agent.initialize();
  const session = await agent.newSession(workdir);
  const modelOption = session.configOptions.find((o: { id: string }) => o.id === "model");
  assert.equal(modelOption.currentValue, "local/coder-big");
  assert.ok(modelOption.options.some((o: { value: string }) => o.value === "deepseek/deepseek-v4-flash"));
  model.enqueue({ content: ["hi from local"] });
  assert.equal((await agent.prompt(session.sessionId, "hello")).stopReason, "end_turn");
  assert.equal(model.requests[0]!.body.model, "coder-big");
  assert.equal(model.requests[0]!.headers.authorization, `Bearer ${key}`);

  // Switching model through the config option applies to the next turn and keeps the history.
  await agent.rpc.request("session/set_config_option", { sessionId: session.sessionId, configId: "model", value: "local/coder-small" });
  model.enqueue({ content: ["small"] });
  await agent.prompt(session.sessionId, "again");
  assert.equal(model.requests[1]!.body.model, "coder-small");
  assert.deepEqual(model.requests[1]!.body.messages.slice(0, model.requests[0]!.body.messages.length), model.requests[0]!.body.messages);

  const status = await run(process.execPath, [BIN, "daemon", "status"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  assert.ok(!status.stdout.includes(key));
  assert.ok(!agent.daemonLog().includes(key));
  assert.ok(!agent.stdoutLines.join("\n").includes(key));

  const bad = spawn({ args: ["--model", "nope/none"] });
  await bad.initialize();
  await assert.rejects(bad.newSession(workdir), (e: { code: number; message: string }) => e.code === -32602 && /--model/.test(e.message));
});

test("a mistyped flag is an error with usage, never ignored: `reasonix setup --modle x`, `reasonix acp --mdl`, `reasonix sessions --cdw`", async (t) => {
  const { home } = await world(t, { noModel: true });
  const env = { ...process.env, REASONIX_HOME: home.dir };
  for (const args of [
    ["setup", "--modle", "x"],
    ["acp", "--mdl", "x"],
    ["sessions", "--cdw", "/"],
    ["daemon", "stop", "--force"],
  ]) {
    const failed = await run(process.execPath, [BIN, ...args], { env }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    assert.ok(failed, `${args.join(" ")} must fail`);
    assert.equal(failed.code, 2, args.join(" "));
    assert.match(failed.stderr, new RegExp(`Unknown option '${args.find((a) => a.startsWith("--"))}'`), failed.stderr);
    assert.match(failed.stderr, /usage: reasonix/);
  }
  assert.throws(() => statSync(join(home.dir, "config.json")), "setup wrote nothing");
});

processTest("REASONIX_MAX_STEPS=abc: the editor's initialize is answered with an error naming the variable", async (t) => {
  const { agent } = await world(t, { connector: "process", env: { REASONIX_MAX_STEPS: "abc" } });
  const err = await agent.initialize().then(
    () => undefined,
    (e: { message: string }) => e,
  );
  assert.ok(err, "initialize must fail");
  assert.match(err.message, /REASONIX_MAX_STEPS="abc"/);
});

test("reasonix setup checks the key against the provider's models endpoint: a refused key saves nothing, an unreachable one is saved unchecked", async (t) => {
  const { home, model } = await world(t, { noModel: true });
  const env = { ...process.env, REASONIX_HOME: home.dir };
  model.modelsKey = "good-key-123";
  const base = ["setup", "--provider", "local", "--base-url", model.url, "--models", "m1"];
  const refused = await run(process.execPath, [BIN, ...base, "--api-key", "wrong-key-456"], { env }).then(
    () => undefined,
    (e: { code: number; stderr: string }) => e,
  );
  assert.ok(refused, "a refused key fails the command");
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refused the key \(HTTP 401: Authentication Fails/);
  assert.doesNotMatch(refused.stderr, /wrong-key-456/);
  assert.throws(() => statSync(join(home.dir, "config.json")), "nothing was saved");

  const accepted = await run(process.execPath, [BIN, ...base, "--api-key", "good-key-123"], { env });
  assert.match(accepted.stderr, /the key works \(4 models at /);
  assert.equal(JSON.parse(readFileSync(join(home.dir, "credentials.json"), "utf8")).LOCAL_API_KEY, "good-key-123");

  const port = await refusedPort();
  const unreachable = await run(
    process.execPath,
    [BIN, "setup", "--provider", "far", "--base-url", `http://127.0.0.1:${port}/v1`, "--models", "m", "--api-key", "k-789"],
    { env },
  );
  assert.match(unreachable.stderr, new RegExp(`the key was not checked: could not reach http://127\\.0\\.0\\.1:${port}/v1/models \\(ECONNREFUSED\\)`));
  assert.equal(JSON.parse(readFileSync(join(home.dir, "credentials.json"), "utf8")).FAR_API_KEY, "k-789");
});
