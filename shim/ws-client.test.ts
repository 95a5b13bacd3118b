import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import { HandshakeError, UnixWebSocket } from "./ws-client.js";

/** A real `ws` server on a Unix socket: the same library the daemon serves /acp with. */
async function server(onConnection: (ws: WebSocket, headers: Record<string, unknown>) => void) {
  const dir = mkdtempSync(join(tmpdir(), "rx-wsc-"));
  const path = join(dir, "s.sock");
  const http = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "wire version 9 is not supported" }));
  });
  const wss = new WebSocketServer({ noServer: true });
  http.on("upgrade", (req, socket, head) => {
    if (req.headers["x-refuse"]) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n{"error":"go away!"}');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req.headers));
  });
  await new Promise<void>((r) => http.listen(path, r));
  return {
    path,
    close: async () => {
      wss.close();
      await new Promise((r) => http.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("text frames of every length class round-trip, fragmented ones too; headers arrive", async () => {
  const sizes = [0, 5, 125, 126, 65535, 65536, 3 * 1024 * 1024];
  let seenHeader: unknown;
  const srv = await server((ws, headers) => {
    seenHeader = headers["x-test"];
    ws.on("message", (data) => {
      const text = data.toString();
      if (text === "fragmented") {
        ws.send("part1-", { fin: false });
        ws.send("part2", { fin: true });
        return;
      }
      ws.ping();
      ws.send(text);
    });
  });
  const ws = await UnixWebSocket.open(srv.path, "/acp", { "x-test": "yes" }, 2000);
  assert.equal(seenHeader, "yes");
  for (const n of sizes) {
    const text = "é".repeat(n / 2) + "x".repeat(n % 2);
    const echoed = new Promise<string>((r) => ws.once("message", r));
    ws.send(text);
    assert.equal(await echoed, text, `size ${n}`);
  }
  const frag = new Promise<string>((r) => ws.once("message", r));
  ws.send("fragmented");
  assert.equal(await frag, "part1-part2");
  const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
  ws.close(1000, "bye");
  assert.equal(await closed, 1000);
  await srv.close();
});

test("a refused upgrade rejects with the status and the server's reason", async () => {
  const srv = await server(() => undefined);
  await assert.rejects(UnixWebSocket.open(srv.path, "/acp", { "x-refuse": "1" }, 2000), (e: unknown) => {
    assert.ok(e instanceof HandshakeError);
    assert.equal(e.status, 403);
    assert.match(e.message, /go away!/);
    return true;
  });
  await srv.close();
});

test("the server going away is a close with 1006; a missing socket is ENOENT", async () => {
  const srv = await server((ws) => ws.terminate());
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const code = await new Promise<number>((r) => ws.once("close", (c) => r(c)));
  assert.equal(code, 1006);
  await srv.close();
  await assert.rejects(UnixWebSocket.open(srv.path, "/acp", {}, 2000), (e: NodeJS.ErrnoException) => e.code === "ENOENT");
});
