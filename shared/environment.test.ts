import { test } from "node:test";
import assert from "node:assert/strict";
import { basicEnvironment, daemonEnvironment, looksSecret } from "./environment.js";

test("a daemon's environment keeps where things are and the locale, never a key, token or another variable", () => {
  const env = daemonEnvironment({
    PATH: "/usr/bin",
    HOME: "/home/u",
    LANG: "C.UTF-8",
    LC_ALL: "C",
    XDG_RUNTIME_DIR: "/run/user/1000",
    REASONIX_HOME: "/tmp/h",
    REASONIX_LOG_LEVEL: "debug",
    REASONIX_BUDGET_TOKENS: "1000",
    NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
    DEEPSEEK_API_KEY: "sk-1",
    AWS_SECRET_ACCESS_KEY: "x",
    GITHUB_TOKEN: "ghp",
    REASONIX_TOKEN: "t",
    XDG_SESSION_PASSWORD: "p",
    EDITOR: "vim",
    NODE_OPTIONS: "--require /tmp/x.js",
    UNSET: undefined,
  });
  assert.deepEqual(Object.keys(env).sort(), [
    "HOME",
    "LANG",
    "LC_ALL",
    "NODE_EXTRA_CA_CERTS",
    "PATH",
    "REASONIX_BUDGET_TOKENS",
    "REASONIX_HOME",
    "REASONIX_LOG_LEVEL",
    "XDG_RUNTIME_DIR",
  ]);
});

test("a window that sent no environment gets where programs are and the locale, nothing else", () => {
  assert.deepEqual(
    basicEnvironment({ PATH: "/usr/bin", HOME: "/h", LANG: "C", LC_ALL: "C", REASONIX_HOME: "/r", DEEPSEEK_API_KEY: "k", XDG_RUNTIME_DIR: "/run", TERM: "x" }),
    {
      PATH: "/usr/bin",
      HOME: "/h",
      LANG: "C",
      LC_ALL: "C",
    },
  );
});

test("secret-looking names", () => {
  for (const name of ["DEEPSEEK_API_KEY", "api_key", "GITHUB_TOKEN", "DB_PASSWORD", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS"])
    assert.ok(looksSecret(name), name);
  assert.ok(!looksSecret("PATH"));
  assert.ok(!looksSecret("REASONIX_BUDGET_TOKENS"), "a budget counted in tokens is a setting");
});
