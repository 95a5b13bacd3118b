import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { closeLogger, createLogger, logOpened, serializeError, setRotation } from "./log.js";

test("the log rotates at its size and keeps the configured number of older files; the newest lines are in daemon.log", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-log-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "daemon.log");
  const log = createLogger(file, "info");
  setRotation(log, { maxBytes: 20_000, keep: 3 });
  await logOpened(log);
  // As a daemon logs: a few lines at a time, the file written out in between.
  for (let i = 0; i < 2000; i++) {
    log.info({ i, filler: "x".repeat(100) }, `line ${i}`);
    if (i % 20 === 19) await logOpened(log);
  }
  log.info("the last line");
  await closeLogger(log);
  assert.deepEqual(readdirSync(dir).sort(), ["daemon.log", "daemon.log.1", "daemon.log.2", "daemon.log.3"]);
  for (const name of ["daemon.log.1", "daemon.log.2", "daemon.log.3"]) {
    // A file holds what was written up to the limit, plus at most the line that crossed it.
    assert.ok(statSync(join(dir, name)).size < 20_000 + 1000, `${name}: ${statSync(join(dir, name)).size} bytes`);
  }
  assert.match(readFileSync(file, "utf8"), /the last line/);
  const kept = ["daemon.log.3", "daemon.log.2", "daemon.log.1", "daemon.log"].map((n) => readFileSync(join(dir, n), "utf8")).join("");
  const numbers = [...kept.matchAll(/"i":(\d+)/g)].map((m) => Number(m[1]));
  assert.deepEqual(
    numbers,
    numbers.slice().sort((a, b) => a - b),
    "the kept files are in order",
  );
  assert.equal(numbers.at(-1), 1999, "nothing recent was lost");
});

test("an uncaught error's stack lands in the log folder, and the process ends", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-crash-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const crashFile = join(dir, "crash.log");
  const crashModule = fileURLToPath(new URL("./crash.js", import.meta.url));
  const script = `import(${JSON.stringify(crashModule)}).then((m) => { m.recordCrashes(${JSON.stringify(crashFile)}); setTimeout(() => { throw new Error("boom from a timer"); }, 0); });`;
  const code = await new Promise<number | null>((resolve) =>
    execFile(process.execPath, ["-e", script], (err) => resolve(err ? ((err as { code?: number }).code ?? null) : 0)),
  );
  assert.equal(code, 70);
  assert.ok(existsSync(crashFile));
  const entry = readFileSync(crashFile, "utf8");
  assert.match(entry, /uncaught exception: Error: boom from a timer\n\s+at /);
});

test("a provider's error is logged with its type, status and stack, and no API key it echoed or was sent with", async (t) => {
  const key = "sk-live-0123456789abcdefghij";
  // A provider that echoes what it was sent: the key in the message, the body and a header.
  const server = createServer((req, res) => {
    const auth = req.headers.authorization ?? "";
    res.writeHead(401, { "content-type": "application/json", "x-echo-authorization": auth });
    res.end(
      JSON.stringify({
        error: { message: `Incorrect API key provided: ${key}. You sent "${auth}".`, type: "invalid_request_error", code: "invalid_api_key", key },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key, maxRetries: 0 });
  const err = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }).then(
    () => assert.fail("the provider refused"),
    (e: unknown) => e,
  );
  assert.ok(JSON.stringify(err).includes(key) || String(err).includes(key), "the SDK's error does carry the key");

  const dir = mkdtempSync(join(tmpdir(), "rx-log-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "daemon.log");
  const log = createLogger(file, "info");
  log.error({ err }, "model request failed");
  log.warn({ err: new Error("the turn failed", { cause: err }) }, "turn failed");
  await closeLogger(log);
  const text = readFileSync(file, "utf8");
  assert.equal(text.includes(key), false, "no key in the log");
  assert.equal(text.includes("x-echo-authorization"), false, "no response headers in the log");
  const [direct, wrapped] = text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).err);
  assert.equal(direct.type, "AuthenticationError");
  assert.equal(direct.status, 401);
  assert.equal(direct.code, "invalid_api_key");
  assert.match(direct.message, /^401 Incorrect API key provided: \[redacted\]/);
  assert.match(direct.stack, /^Error: 401 Incorrect API key provided: \[redacted\][^\n]*\n\s+at /);
  assert.match(wrapped.stack, /^Error: the turn failed\n\s+at [\s\S]*caused by: Error: 401 Incorrect API key/m, "the cause's stack follows");
});

test("whatever is logged as err, an error or not, reads as text with no key in it", () => {
  assert.deepEqual(serializeError("token sk-abcdefghijkl leaked"), "token [redacted] leaked");
  assert.equal(String(serializeError({ apiKey: "plain-secret", authorization: "Bearer also-secret" })).includes("secret"), false);
  const fsErr = Object.assign(new Error("ENOENT: no such file"), {
    code: "ENOENT",
    errno: -2,
    syscall: "open",
    path: "/x",
    options: { headers: { authorization: "Bearer abc" } },
  });
  const out = serializeError(fsErr) as Record<string, unknown>;
  assert.deepEqual(Object.keys(out).sort(), ["code", "errno", "message", "stack", "syscall", "type"]);
});
