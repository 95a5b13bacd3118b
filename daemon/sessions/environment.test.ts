import { test } from "node:test";
import assert from "node:assert/strict";
import { filterEnvironment, looksSecret, sessionUmask, windowFacts } from "./environment.js";
import { DEFAULT_UMASK } from "../tools/umask.js";

const window = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  FOO: "bar",
  FOO_API_KEY: "k1",
  MY_SERVICE_TOKEN: "t1",
  OTHER_SECRET: "s1",
  DB_PASSWORD: "p1",
  aws_credentials_file: "c1",
  DEEPSEEK_API_KEY: "sk-live",
  KEYBOARD_LAYOUT: "us",
  EMPTY: undefined,
};

test("secret-looking names are left out by default, whatever their case", () => {
  assert.deepEqual(Object.keys(filterEnvironment(window)).sort(), ["FOO", "HOME", "PATH"]);
  for (const name of ["FOO_API_KEY", "MY_SERVICE_TOKEN", "OTHER_SECRET", "DB_PASSWORD", "aws_credentials_file", "github_token"])
    assert.ok(looksSecret(name), name);
  assert.ok(!looksSecret("PATH"));
});

test("include brings a name back; exclude removes more and wins over include", () => {
  const env = filterEnvironment(window, { include: ["KEYBOARD_*", "DB_PASS*"], exclude: ["HOME", "db_*"] });
  assert.deepEqual(env, { PATH: "/usr/bin", FOO: "bar", KEYBOARD_LAYOUT: "us" });
  assert.deepEqual(filterEnvironment({ "A.B": "1", AXB: "2" }, { exclude: ["A.B"] }), { AXB: "2" }, "a dot in a pattern is literal");
});

test("a session's umask: its creating window's, else the default; a window's facts are its filtered environment and umask", () => {
  assert.equal(sessionUmask({}), DEFAULT_UMASK, "a window that did not say gets the default");
  assert.equal(sessionUmask({ umask: 0o027 }), 0o027);
  assert.deepEqual(windowFacts({ env: { PATH: "/other", API_KEY: "k" }, umask: 0o077 }, undefined), { environment: { PATH: "/other" }, umask: 0o077 });
  assert.deepEqual(windowFacts({ env: {} }, undefined), { environment: {}, umask: undefined }, "a window that did not say offers no umask");
});
