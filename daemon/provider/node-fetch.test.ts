import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer as createNetServer, type Socket } from "node:net";
import { createServer, type ServerResponse } from "node:http";
import { test } from "node:test";
import { gzipSync } from "node:zlib";
import { MAX_WHOLE_BODY_BYTES, nodeFetch, rawBody } from "./node-fetch.js";

async function server(t: { after(fn: () => void): void }, handle: (path: string, res: ServerResponse, body: string) => void): Promise<string> {
  const s = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => handle(req.url ?? "/", res, body));
  });
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  t.after(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
}

test("an event stream comes back bodiless, its socket stream from rawBody; the request body and headers arrive", async (t) => {
  let seen = "";
  const base = await server(t, (_path, res, body) => {
    seen = body;
    res.writeHead(200, { "content-type": "text/event-stream", "x-request-id": "r1" });
    res.end("data: one\n\ndata: [DONE]\n\n");
  });
  const response = await nodeFetch(`${base}/v1/chat/completions`, { method: "POST", body: '{"a":1}', headers: { "content-type": "application/json" } });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-request-id"), "r1");
  assert.equal(response.body, null);
  const raw = rawBody(response);
  assert.ok(raw);
  let text = "";
  raw.setEncoding("utf8");
  for await (const c of raw) text += c;
  assert.equal(text, "data: one\n\ndata: [DONE]\n\n");
  assert.equal(seen, '{"a":1}');
});

test("an error answer is read whole into an ordinary Response", async (t) => {
  const base = await server(t, (_path, res) => {
    res.writeHead(429, { "content-type": "application/json", "retry-after-ms": "0" });
    res.end('{"error":{"message":"slow down"}}');
  });
  const response = await nodeFetch(`${base}/x`, { method: "POST", body: "{}" });
  assert.equal(response.status, 429);
  assert.equal(rawBody(response), undefined);
  assert.deepEqual(await response.json(), { error: { message: "slow down" } });
});

test("an answer read whole keeps its first 8 MiB; the rest is not read", async (t) => {
  let closed: Promise<unknown> | undefined;
  const base = await server(t, (_path, res) => {
    res.writeHead(500, { "content-type": "text/html" });
    closed = once(res, "close");
    // 64 MiB if it were all read; written as the socket takes it.
    const piece = "x".repeat(1024 * 1024);
    let left = 64;
    const more = (): void => {
      while (left > 0 && !res.destroyed) {
        left--;
        if (!res.write(piece)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
  });
  const response = await nodeFetch(`${base}/x`, { method: "POST", body: "{}" });
  assert.equal(response.status, 500);
  assert.equal((await response.text()).length, MAX_WHOLE_BODY_BYTES);
  await closed;
});

test("aborting mid-stream closes the connection and errors the stream", async (t) => {
  let closed: Promise<unknown> | undefined;
  const base = await server(t, (_path, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
    closed = once(res, "close");
  });
  const ac = new AbortController();
  const response = await nodeFetch(base, { method: "POST", body: "{}", signal: ac.signal });
  const raw = rawBody(response)!;
  const errored = new Promise((resolve) => raw.once("close", resolve));
  ac.abort();
  await errored;
  await closed;
  assert.ok(raw.destroyed);
});

test("an unreachable server fails as undici does: TypeError with the cause's code", async () => {
  const s = createServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const port = (s.address() as { port: number }).port;
  s.close();
  await assert.rejects(nodeFetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" }), (err: TypeError & { cause?: { code?: string } }) => {
    assert.equal(err.message, "fetch failed");
    assert.equal(err.cause?.code, "ECONNREFUSED");
    return true;
  });
});

test("an already aborted signal fails at once with an AbortError", async () => {
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(nodeFetch("http://127.0.0.1:9/", { signal: ac.signal }), { name: "AbortError" });
});

test("a body the server compressed anyway comes back decoded, whole or streamed", async (t) => {
  const base = await server(t, (path, res) => {
    if (path === "/error") {
      res.writeHead(500, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync('{"error":{"message":"down"}}'));
    } else {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
      res.end(gzipSync("data: one\n\n"));
    }
  });
  assert.deepEqual(await (await nodeFetch(`${base}/error`, { method: "POST", body: "{}" })).json(), { error: { message: "down" } });
  const raw = rawBody(await nodeFetch(`${base}/stream`, { method: "POST", body: "{}" }))!;
  let text = "";
  raw.setEncoding("utf8");
  for await (const c of raw) text += c;
  assert.equal(text, "data: one\n\n");
});

test("a kept-alive socket the server dropped as the next request went out: sent again at once on a new one, once", async (t) => {
  const answer = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: keep-alive\r\n\r\n{"ok":true}';
  const requests: number[] = [];
  let connections = 0;
  // The first connection answers once and drops the second request unanswered, as a server whose
  // idle timeout fired just as it arrived; any later connection answers every request.
  const open = new Set<Socket>();
  t.after(() => {
    for (const socket of open) socket.destroy();
  });
  const server = createNetServer((socket) => {
    open.add(socket);
    const n = ++connections;
    let seen = 0;
    socket.on("data", () => {
      requests.push(n);
      if (n === 1 && ++seen === 2) socket.destroy();
      else socket.write(answer);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/chat/completions`;
  const post = () => nodeFetch(url, { method: "POST", body: '{"q":1}', headers: { "content-type": "application/json" } });
  assert.equal(await (await post()).text(), '{"ok":true}');
  assert.equal(await (await post()).text(), '{"ok":true}', "the dropped request was sent again");
  assert.deepEqual(requests, [1, 1, 2]);
  // A fresh socket that fails is not retried: the cause reaches the caller.
  server.close();
  const refused = createNetServer((socket) => {
    open.add(socket);
    socket.on("data", () => socket.destroy());
  });
  refused.listen(0, "127.0.0.1");
  await once(refused, "listening");
  t.after(() => refused.close());
  const dropped = `http://127.0.0.1:${(refused.address() as { port: number }).port}/`;
  await assert.rejects(
    nodeFetch(dropped, { method: "POST", body: "x" }),
    (err: TypeError) => err.message === "fetch failed" && (err.cause as { code?: string }).code === "ECONNRESET",
  );
});
