import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { BIN, makeHome } from "../support/harness.js";
import { world, processTest } from "./fixture.js";

const run = promisify(execFile);

function get(
  target: { socketPath?: string; host?: string; port?: number },
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path, method: "GET", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, type: res.headers["content-type"] }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("health, readiness, status and Prometheus metrics on the daemon's socket", async (t) => {
  const { agent, home, workdir, model } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "hi");
  const socketPath = join(home.dir, "run", "daemon.sock");
  assert.equal((await get({ socketPath }, "/livez")).status, 200);
  const ready = await get({ socketPath }, "/readyz");
  assert.deepEqual([ready.status, JSON.parse(ready.body).ready], [200, true]);
  const status = JSON.parse((await get({ socketPath }, "/status")).body);
  assert.equal(status.connections, 1);
  assert.equal(status.sessions.live, 1);
  const metrics = await get({ socketPath }, "/metrics");
  assert.equal(metrics.status, 200);
  assert.match(metrics.type ?? "", /text\/plain/);
  assert.match(metrics.body, /^reasonix_sessions_live 1$/m);
  assert.match(metrics.body, /^reasonix_attachments 1$/m);
  assert.match(metrics.body, /^reasonix_model_rounds 1$/m);
  assert.match(metrics.body, /reasonix_build_info\{version="0\.1\.0"/);
  assert.match(metrics.body, /^reasonix_search_threads 0$/m);
  // The event loop's delay since the previous scrape: what a session that hogs the loop shows as.
  const again = await get({ socketPath }, "/metrics");
  for (const q of ["p50", "p90", "p99", "max"]) assert.match(again.body, new RegExp(`^reasonix_nodejs_eventloop_lag_${q}_seconds \\d`, "m"));
  assert.ok(!metrics.body.includes("sk-test"));
  void model;
});

processTest("the loopback TCP listener: token on every route but /livez, loopback Host, no browser Origin", async (t) => {
  const home = await makeHome();
  t.after(() => home.cleanup());
  await run(process.execPath, [BIN, "daemon", "start", "--listen", "127.0.0.1:0"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  const info = JSON.parse(readFileSync(join(home.dir, "run", "daemon.json"), "utf8"));
  const [host, portText] = info.tcp.split(":");
  const port = Number(portText);
  assert.equal(host, "127.0.0.1");
  const tokenFile = join(home.dir, "token");
  assert.equal(statSync(tokenFile).mode & 0o777, 0o600);
  const token = readFileSync(tokenFile, "utf8").trim();
  assert.match(token, /^[0-9a-f]{64}$/);
  const at = { host: "127.0.0.1", port };

  assert.equal((await get(at, "/livez")).status, 200);
  assert.equal((await get(at, "/status")).status, 401);
  assert.equal((await get(at, "/status", { authorization: "Bearer wrong" })).status, 401);
  assert.equal((await get(at, "/status", { authorization: `Bearer ${token}` })).status, 200);
  assert.equal((await get(at, "/status", { authorization: `Bearer ${token}`, host: "evil.example:80" })).status, 403);
  assert.equal((await get(at, "/status", { authorization: `Bearer ${token}`, origin: "https://evil.example" })).status, 403);

  // /acp there, for a plain ACP client with and without the token: acp-websocket.test.ts.

  await run(process.execPath, [BIN, "daemon", "stop"], { env: { ...process.env, REASONIX_HOME: home.dir } });
  assert.throws(() => statSync(tokenFile), /ENOENT/);
});

processTest("a listener on a non-loopback address is refused at start", async (t) => {
  const home = await makeHome();
  t.after(() => home.cleanup());
  await assert.rejects(
    run(process.execPath, [BIN, "daemon", "start", "--listen", "0.0.0.0:7777"], { env: { ...process.env, REASONIX_HOME: home.dir } }),
    // The daemon's own words reach the command that started it, not "exited during start".
    (e: { stderr: string }) => /listen: 0\.0\.0\.0 is not a loopback address/.test(e.stderr),
  );
  assert.match(readFileSync(join(home.dir, "logs", "daemon.log"), "utf8"), /not a loopback address/);
});
