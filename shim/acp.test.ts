/**
 * The shim's unit on streams in memory, against a real `ws` server on a Unix socket standing in for
 * the daemon: what it answers on its own (no daemon, a lost daemon, oversize lines), with the exact
 * id the editor wrote, and how it rejoins and leaves.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { PassThrough, Writable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import { ErrorCode } from "../shared/jsonrpc.js";
import { MAX_LINE_BYTES } from "../shared/ndjson.js";
import { runAcp, type ShimRun } from "./acp.js";
import { DaemonUnavailableError, type DaemonLink } from "./connect.js";
import { HandshakeError, UnixWebSocket } from "./ws-client.js";

/** An id JavaScript rounds (to 18446744073709552000): only its text says which request it was. */
const BIG = "18446744073709551617";
const LOG = "/var/empty/daemon.log";

/** A `ws` server on a Unix socket; each connection's received lines are collected. */
async function fakeDaemon(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), "rx-acp-"));
  const path = join(dir, "d.sock");
  const http = createServer();
  // A window that says x-refuse is refused at the upgrade (401), as the daemon refuses another wire.
  const wss = new WebSocketServer({ server: http, verifyClient: (info: { req: IncomingMessage }) => !info.req.headers["x-refuse"] });
  /** What came in each upgrade's own read, behind the request (ws reads it as the first frames). */
  const heads: Buffer[] = [];
  // A copy: ws unmasks the frames in place.
  http.on("upgrade", (_req, _socket, head: Buffer) => heads.push(Buffer.from(head)));
  const connections: { ws: WebSocket; lines: string[]; closed: Promise<number> }[] = [];
  const joined: ((c: (typeof connections)[number]) => void)[] = [];
  wss.on("connection", (ws) => {
    const c = { ws, lines: [] as string[], closed: new Promise<number>((r) => ws.once("close", r)) };
    ws.on("message", (data) => c.lines.push(data.toString()));
    connections.push(c);
    joined.shift()?.(c);
  });
  await new Promise<void>((r) => http.listen(path, r));
  t.after(async () => {
    for (const c of connections) c.ws.terminate();
    wss.close();
    await new Promise((r) => http.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    path,
    connections,
    heads,
    /** The next connection (or the one already made and not yet taken). */
    next: (n: number) => (connections[n] ? Promise.resolve(connections[n]) : new Promise<(typeof connections)[number]>((r) => joined.push(r))),
  };
}

/** The shim's unit on a PassThrough and a Writable that records its lines; `link` is how it reaches the daemon. */
function shim(link: Partial<DaemonLink>) {
  const input = new PassThrough();
  const lines: string[] = [];
  let stderr = "";
  let rest = "";
  let closed = false;
  const waiters = new Set<() => void>();
  const output = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (closed) return done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      rest += chunk.toString("utf8");
      const parts = rest.split("\n");
      rest = parts.pop()!;
      lines.push(...parts);
      for (const w of waiters) w();
      done();
    },
  });
  const daemon: DaemonLink = {
    logFile: LOG,
    open: () => Promise.reject(new DaemonUnavailableError("no daemon is running", "not_running")),
    info: () => undefined,
    stillRunningAfter: async () => false,
    ...link,
  };
  const run: ShimRun = runAcp({ input, output, stderr: (s) => void (stderr += s), daemon });
  return {
    run,
    input,
    lines,
    stderr: () => stderr,
    closeOutput: () => void (closed = true),
    send: (msg: string) => input.write(`${msg}\n`),
    /** The first output line after index `from` that includes `text`; fails after 5 s naming what came. */
    line(text: string, from = 0): Promise<string> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no output line with ${text} in 5 s; got:\n${lines.join("\n")}`));
        }, 5000);
        const check = () => {
          const hit = lines.slice(from).find((l) => l.includes(text));
          if (hit === undefined) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

const request = (id: string, method: string, params: object = {}) => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${JSON.stringify(params)}}`;

test("no daemon: every request is refused with the id exactly as written and the cause; notifications get nothing; exit 1 at EOF", async () => {
  const s = shim({});
  s.send(request(BIG, "initialize"));
  s.send('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}');
  s.send(request('"b"', "session/new", { cwd: "/" }));
  s.send("{not json");
  const big = await s.line(`"id":${BIG},`);
  assert.equal(
    big,
    `{"jsonrpc":"2.0","id":${BIG},"error":{"code":${ErrorCode.DaemonUnavailable},"message":"no daemon is running","data":{"reason":"not_running","logPath":"${LOG}"}}}`,
  );
  await s.line('"id":"b"');
  await s.line(`"code":${ErrorCode.ParseError}`);
  s.input.end();
  assert.equal(await s.run.exited, 1);
  assert.equal(s.lines.length, 3, "the notification is not answered");
  assert.equal(s.stderr(), "reasonix acp: no daemon is running\n");
});

test("the daemon dies: each request it left unanswered gets -32001 with its exact id, one it answered gets nothing more", async (t) => {
  const d = await fakeDaemon(t);
  let opens = 0;
  // Still running after the drop: the daemon let this window go on purpose, so no rejoin is tried.
  const s = shim({ open: () => (opens++, UnixWebSocket.open(d.path, "/acp", {}, 2000)), stillRunningAfter: async () => true });
  s.send(request(BIG, "initialize"));
  s.send(request("7", "session/prompt", { sessionId: "s", prompt: [] }));
  const daemon = await d.next(0);
  while (daemon.lines.length < 2) await new Promise((r) => setTimeout(r, 5));
  assert.equal(daemon.lines[0], request(BIG, "initialize"), "lines pass through byte for byte");
  // The daemon echoes the id as written; only the line's text tells it from its rounded neighbours.
  daemon.ws.send(`{"jsonrpc":"2.0","id":${BIG},"result":{"protocolVersion":1}}`);
  await s.line('"protocolVersion":1');
  daemon.ws.terminate();
  const lost = await s.line('"id":7,');
  assert.deepEqual(JSON.parse(lost).error, {
    code: ErrorCode.DaemonLost,
    message: `The Reasonix daemon connection was lost; see ${LOG}`,
    data: { reason: "daemon_lost", logPath: LOG },
  });
  assert.equal(await s.run.exited, 1);
  assert.equal(opens, 1);
  assert.equal(s.lines.filter((l) => l.includes(BIG)).length, 1, "the answered initialize is not answered twice");
});

test("a daemon back within the rejoin window: the shim rejoins as the same window under private ids the editor never sees", async (t) => {
  const d = await fakeDaemon(t);
  const s = shim({ open: () => UnixWebSocket.open(d.path, "/acp", {}, 2000) });
  s.send(request("1", "initialize", { protocolVersion: 1 }));
  s.send(request("2", "session/new", { cwd: "/w", mcpServers: [] }));
  const first = await d.next(0);
  while (first.lines.length < 2) await new Promise((r) => setTimeout(r, 5));
  first.ws.send('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}');
  first.ws.send('{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}');
  await s.line('"sessionId":"s1"');
  first.ws.terminate();
  const second = await d.next(1);
  while (second.lines.length < 2) await new Promise((r) => setTimeout(r, 5));
  const [init, resume] = second.lines.map((l) => JSON.parse(l));
  assert.equal(init.method, "initialize");
  assert.match(init.id, /^__reasonix_shim_/);
  assert.deepEqual([resume.method, resume.params], ["session/resume", { sessionId: "s1", cwd: "/w", mcpServers: [] }]);
  second.ws.send(`{"jsonrpc":"2.0","id":"${init.id}","result":{}}`);
  s.send(request("3", "session/prompt", { sessionId: "s1", prompt: [] }));
  while (second.lines.length < 3) await new Promise((r) => setTimeout(r, 5));
  second.ws.send('{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}');
  await s.line('"stopReason"');
  assert.ok(!s.lines.some((l) => l.includes("__reasonix_shim_")), "private answers stay in the shim");
  assert.match(s.stderr(), /reconnected to the daemon/);
  s.input.end();
  assert.equal(await second.closed, 1000, "leaving closes politely");
  assert.equal(await s.run.exited, 0);
});

test("an oversize line is answered -32600 with the id from its head and never sent; a closed output leaves politely, exit 0", async (t) => {
  const d = await fakeDaemon(t);
  const s = shim({ open: () => UnixWebSocket.open(d.path, "/acp", {}, 2000) });
  const daemon = await d.next(0);
  s.input.write(`{"jsonrpc":"2.0","id":"huge","method":"session/prompt","params":{"x":"${"x".repeat(MAX_LINE_BYTES)}"}}\n`);
  assert.match(await s.line('"id":"huge"'), /"code":-32600,"message":"Message too large/);
  assert.equal(daemon.lines.length, 0);
  s.closeOutput();
  daemon.ws.send('{"jsonrpc":"2.0","method":"session/update","params":{}}');
  assert.equal(await daemon.closed, 1000);
  assert.equal(await s.run.exited, 0);
  assert.equal(s.stderr(), "", "nothing said about a client that left");
});

test("kill(): the window dies, the socket is dropped without a close frame", async (t) => {
  const d = await fakeDaemon(t);
  const s = shim({ open: () => UnixWebSocket.open(d.path, "/acp", {}, 2000) });
  const daemon = await d.next(0);
  s.run.kill();
  assert.equal(await daemon.closed, 1006);
  const settled = await Promise.race([s.run.exited.then(() => "exited"), new Promise((r) => setTimeout(() => r("still"), 100))]);
  assert.equal(settled, "still", "a killed window reports no exit code of its own");
});

/** The text of each masked client frame in `data` (small, unfragmented ones: what a shim sends first). */
function clientTexts(data: Buffer): string[] {
  const texts: string[] = [];
  for (let at = 0; at < data.length; ) {
    let len = data[at + 1]! & 0x7f;
    let head = 2;
    if (len === 126) [len, head] = [data.readUInt16BE(at + 2), 4];
    const mask = data.subarray(at + head, at + head + 4);
    const payload = Buffer.from(data.subarray(at + head + 4, at + head + 4 + len));
    for (let i = 0; i < len; i++) payload[i]! ^= mask[i & 3]!;
    texts.push(payload.toString("utf8"));
    at += head + 4 + len;
  }
  return texts;
}

test("the editor's initialize goes with the upgrade request; a session/new behind it waits for the daemon's 101", async (t) => {
  const d = await fakeDaemon(t);
  let connect!: () => void;
  const connecting = new Promise<void>((r) => (connect = r));
  const s = shim({ open: async (_autostart, first) => (await connecting, UnixWebSocket.open(d.path, "/acp", {}, 2000, first)) });
  const init = request("1", "initialize", { protocolVersion: 1 });
  const create = request("2", "session/new", { cwd: "/w", mcpServers: [] });
  s.send(init);
  s.send(create);
  await new Promise((r) => setImmediate(r));
  connect();
  const daemon = await d.next(0);
  while (daemon.lines.length < 2) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(daemon.lines, [init, create], "each line once, in order");
  assert.deepEqual(clientTexts(d.heads[0]!), [init], "only the initialize rode with the upgrade");
  s.input.end();
  assert.equal(await s.run.exited, 0);
});

test("an upgrade refused after the initialize went with it: the editor gets the refusal for it, the daemon never read it", async (t) => {
  const d = await fakeDaemon(t);
  const s = shim({
    open: async (_autostart, first) => {
      await new Promise((r) => setTimeout(r, 20));
      return UnixWebSocket.open(d.path, "/acp", { "x-refuse": "1" }, 2000, first).catch((err: unknown) => {
        throw err instanceof HandshakeError ? new DaemonUnavailableError(err.message) : err;
      });
    },
  });
  s.send(request(BIG, "initialize", { protocolVersion: 1 }));
  const refused = JSON.parse((await s.line(`"id":${BIG},`)).replace(BIG, "0")) as { error: { code: number; message: string } };
  assert.equal(refused.error.code, ErrorCode.DaemonUnavailable);
  assert.match(refused.error.message, /HTTP 401/);
  assert.equal(d.connections.length, 0);
  assert.equal(d.heads.length, 1, "the upgrade was tried");
  s.input.end();
  assert.equal(await s.run.exited, 1);
});
