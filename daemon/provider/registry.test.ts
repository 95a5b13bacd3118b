import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEnvFile, resolveEndpoint, resolveModelRef } from "./registry.js";
import { resolveConfig } from "../config/config.js";

test("the env file is read the way systemd reads an EnvironmentFile", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-envfile-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "env");
  writeFileSync(file, '# keys\nDEEPSEEK_API_KEY=sk-file\nexport OTHER_KEY="quoted value"\n  SPACED = x \nnot a line\n1BAD=no\n');
  assert.deepEqual(readEnvFile(file), { DEEPSEEK_API_KEY: "sk-file", OTHER_KEY: "quoted value", SPACED: "x" });
  assert.deepEqual(readEnvFile(join(dir, "missing")), {});
});

test("a key comes from the window first, then the daemon's own, then the env file, then the credentials file", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-keys-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const envFile = join(dir, "env");
  const credentialsFile = join(dir, "credentials.json");
  writeFileSync(envFile, "DEEPSEEK_API_KEY=from-env-file\n");
  writeFileSync(credentialsFile, JSON.stringify({ DEEPSEEK_API_KEY: "from-credentials" }));
  const choice = resolveModelRef(resolveConfig({}, {}), "deepseek/deepseek-v4-flash")!;
  const key = (windowEnv: Record<string, string>, daemonEnv: Record<string, string>, files = { envFile, credentialsFile }) =>
    resolveEndpoint(choice, windowEnv, { daemonEnv, ...files }).apiKey;
  assert.equal(key({ DEEPSEEK_API_KEY: "from-window" }, { DEEPSEEK_API_KEY: "from-daemon" }), "from-window");
  assert.equal(key({}, { DEEPSEEK_API_KEY: "from-daemon" }), "from-daemon");
  assert.equal(key({}, {}), "from-env-file");
  assert.equal(key({}, {}, { envFile: join(dir, "none"), credentialsFile }), "from-credentials");
  assert.throws(() => key({}, {}, { envFile: join(dir, "none"), credentialsFile: join(dir, "none") }), /No API key for provider "deepseek"/);
});
