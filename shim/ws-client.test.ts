import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import { HandshakeError, MAX_MESSAGE_BYTES, UnixWebSocket, WebSocketProtocolError } from "./ws-client.js";

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
    http,
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

test("messages given as first travel with the upgrade request: ws takes them from the upgrade's head, in order, before later sends", async () => {
  const heads: number[] = [];
  const received: string[] = [];
  const srv = await server((ws) => ws.on("message", (data) => received.push(data.toString())));
  // Seen beside the test server's own upgrade listener, which hands the same head to ws.
  const seen = new Promise<void>((r) => srv.http.once("upgrade", (_req, _socket, head: Buffer) => (heads.push(head.length), r())));
  let asked = 0;
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000, () => (asked++, ["one", "twó", "x".repeat(70_000)]));
  await seen;
  ws.send("later");
  while (received.length < 4) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(received, ["one", "twó", "x".repeat(70_000), "later"]);
  assert.equal(asked, 1);
  assert.ok(heads[0]! > 0, "the first frames came in the upgrade's own read");
  await closeClient(ws);
  await srv.close();
});

test("a refused upgrade never delivers the messages given as first", async () => {
  let connections = 0;
  const srv = await server(() => connections++);
  await assert.rejects(
    UnixWebSocket.open(srv.path, "/acp", { "x-refuse": "1" }, 2000, () => ["hello"]),
    HandshakeError,
  );
  assert.equal(connections, 0);
  await srv.close();
});

/** A Unix socket server where `onSocket` decides what each connection gets; `close` ends them all. */
async function socketServer(onSocket: (socket: Socket) => void) {
  const dir = mkdtempSync(join(tmpdir(), "rx-wsc-"));
  const path = join(dir, "s.sock");
  const held: Socket[] = [];
  const srv = createNetServer((socket) => {
    held.push(socket);
    onSocket(socket);
  });
  await new Promise<void>((r) => srv.listen(path, r));
  return {
    path,
    close: async () => {
      for (const s of held) s.destroy();
      await new Promise((r) => srv.close(r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("a server that never answers the upgrade: open rejects with ETIMEDOUT after its bound", async () => {
  const silent = await socketServer(() => undefined);
  try {
    await assert.rejects(UnixWebSocket.open(silent.path, "/acp", {}, 200), { code: "ETIMEDOUT", message: "no WebSocket upgrade within 200 ms" });
  } finally {
    await silent.close();
  }
});

test("a server that drops the connection before answering the upgrade: open rejects at once with ECONNRESET", async () => {
  const dropping = await socketServer((socket) => socket.once("data", () => socket.end()));
  try {
    // The bound is far off: the rejection comes from the close, not from the timer.
    await assert.rejects(UnixWebSocket.open(dropping.path, "/acp", {}, 60_000), {
      code: "ECONNRESET",
      message: "the daemon closed the connection before answering the upgrade",
    });
  } finally {
    await dropping.close();
  }
});

test("a process stalled past the bound after the 101 arrived still upgrades: the answer is read before the verdict", async () => {
  let stalledMs = 0;
  const srv = await server(() => {
    // The 101 is written; now the whole process (the client too) is busy past the client's bound.
    const from = Date.now();
    while (Date.now() - from < 500);
    stalledMs = Date.now() - from;
  });
  try {
    const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 200);
    assert.ok(stalledMs >= 500);
    const closed = new Promise<number>((r) => ws.once("close", (code: number) => r(code)));
    ws.close(1000);
    assert.equal(await closed, 1000);
  } finally {
    await srv.close();
  }
});

test("the server going away is a close with 1006; a missing socket is ENOENT", async () => {
  const srv = await server((ws) => ws.terminate());
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const code = await new Promise<number>((r) => ws.once("close", (c) => r(c)));
  assert.equal(code, 1006);
  await srv.close();
  await assert.rejects(UnixWebSocket.open(srv.path, "/acp", {}, 2000), (e: NodeJS.ErrnoException) => e.code === "ENOENT");
});

/** Closes the client and waits until its socket is gone. */
async function closeClient(ws: UnixWebSocket): Promise<void> {
  const closed = new Promise((r) => ws.once("close", r));
  ws.close();
  await closed;
}

/** A frame as a server writes it; `mask`, `rsv` and a wrong `fin` are there to break the rules. */
function frame(opcode: number, payload: Buffer | string, opts: { fin?: boolean; rsv?: number; mask?: boolean; declaredLength?: number } = {}): Buffer {
  const body = Buffer.from(payload);
  const len = opts.declaredLength ?? body.length;
  const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = (opts.fin === false ? 0 : 0x80) | ((opts.rsv ?? 0) << 4) | opcode;
  head[1] = (opts.mask ? 0x80 : 0) | (len < 126 ? len : len < 65536 ? 126 : 127);
  if (len >= 126 && len < 65536) head.writeUInt16BE(len, 2);
  else if (len >= 65536) head.writeBigUInt64BE(BigInt(len), 2);
  if (!opts.mask) return Buffer.concat([head, body]);
  const key = Buffer.from([1, 2, 3, 4]);
  return Buffer.concat([head, key, Buffer.from(body.map((b, i) => b ^ key[i & 3]!))]);
}

interface ClientFrame {
  opcode: number;
  payload: Buffer;
}

/**
 * A hand-made server: completes the upgrade itself, then lets the test write any bytes (frames `ws`
 * would refuse to send) and collects the client's frames, unmasked.
 */
async function rawServer(onConnection: (socket: Socket, frames: ClientFrame[]) => void) {
  return socketServer((socket) => {
    let buf = Buffer.alloc(0);
    let upgraded = false;
    const frames: ClientFrame[] = [];
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf("\r\n\r\n");
        if (end === -1) return;
        const key = /sec-websocket-key: *(\S+)/i.exec(buf.subarray(0, end).toString("latin1"))?.[1];
        const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
        buf = buf.subarray(end + 4);
        upgraded = true;
        onConnection(socket, frames);
      }
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1]! & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + 4 + len) return;
        const key = buf.subarray(off, off + 4);
        const payload = Buffer.from(buf.subarray(off + 4, off + 4 + len).map((b, i) => b ^ key[i & 3]!));
        frames.push({ opcode: buf[0]! & 0x0f, payload });
        socket.emit("client-frame");
        buf = buf.subarray(off + 4 + len);
      }
    });
  });
}

/** Opens a client on a raw server that writes `bytes`; resolves with what each side saw of the close. */
async function failedBy(bytes: Buffer[], listen: "message" | "bytes" = "message") {
  let serverFrames: ClientFrame[] = [];
  let serverEnded: Promise<void> | undefined;
  const srv = await rawServer((socket, frames) => {
    serverFrames = frames;
    serverEnded = new Promise((r) => socket.once("close", r));
    for (const b of bytes) socket.write(b);
  });
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const messages: string[] = [];
  if (listen === "bytes") ws.on("bytes", (b) => messages.push(b.toString()));
  else ws.on("message", (t) => messages.push(t));
  let error: unknown;
  ws.on("error", (e) => {
    error = e;
  });
  const [code, reason] = await new Promise<[number, string]>((r) => ws.once("close", (c, why) => r([c, why])));
  await serverEnded;
  const sent = serverFrames.find((f) => f.opcode === 0x8);
  await srv.close();
  return { code, reason, error, messages, sentCode: sent && sent.payload.length >= 2 ? sent.payload.readUInt16BE(0) : undefined };
}

const refusals: [string, Buffer[], number][] = [
  ["a masked frame from the server", [frame(0x1, "hi", { mask: true })], 1002],
  ["an RSV bit with no extension", [frame(0x1, "hi", { rsv: 0b100 })], 1002],
  ["a 126-byte ping", [frame(0x9, Buffer.alloc(126))], 1002],
  ["a fragmented ping", [frame(0x9, "p", { fin: false }), frame(0x0, "q")], 1002],
  ["a continuation with no message started", [frame(0x0, "x")], 1002],
  ["a new text frame inside a fragmented message", [frame(0x1, "a", { fin: false }), frame(0x1, "b")], 1002],
  ["an unknown opcode", [frame(0x3, "x")], 1002],
  ["a binary frame", [frame(0x2, "bin")], 1003],
  ["text that is not UTF-8", [frame(0x1, Buffer.from([0x61, 0xc3, 0x28]))], 1007],
  ["a code point cut short at the end of a fragmented message", [frame(0x1, "a", { fin: false }), frame(0x0, Buffer.from([0xe2, 0x82]))], 1007],
];

for (const [what, bytes, expected] of refusals) {
  test(`${what} fails the connection with ${expected}, sent to the server and seen by the caller`, async () => {
    const r = await failedBy(bytes);
    assert.equal(r.sentCode, expected, "the close frame the server got");
    assert.equal(r.code, expected, "the close event's code");
    assert.ok(r.error instanceof WebSocketProtocolError && r.error.code === expected, "an error event first");
    assert.deepEqual(r.messages, []);
  });
}

test("text that is not UTF-8 fails with 1007 for a listener of bytes too", async () => {
  for (const bytes of [[frame(0x1, Buffer.from([0x61, 0xc3, 0x28]))], [frame(0x1, "a", { fin: false }), frame(0x0, Buffer.from([0xe2, 0x82]))]]) {
    const r = await failedBy(bytes, "bytes");
    assert.equal(r.code, 1007);
    assert.equal(r.sentCode, 1007);
    assert.deepEqual(r.messages, []);
  }
});

test("with a listener of bytes, a message arrives as its UTF-8 bytes, whole across fragments, and is not decoded for message", async () => {
  const srv = await rawServer((socket) => {
    socket.write(frame(0x1, Buffer.from([0x61, 0xc3]), { fin: false }));
    socket.write(frame(0x0, Buffer.from([0xa9, 0x62])));
    socket.write(frame(0x1, "second"));
  });
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const decoded: string[] = [];
  ws.on("message", (t) => decoded.push(t));
  const got: Buffer[] = [];
  await new Promise<void>((r) =>
    ws.on("bytes", (b) => {
      got.push(b);
      if (got.length === 2) r();
    }),
  );
  assert.deepEqual(
    got.map((b) => b.toString("hex")),
    [Buffer.from("aéb").toString("hex"), Buffer.from("second").toString("hex")],
  );
  assert.deepEqual(decoded, [], "message is not emitted while bytes is listened to");
  await closeClient(ws);
  await srv.close();
});

test("frames cut anywhere across reads (inside a header, its extended length, the payload) arrive whole and in order", async () => {
  const texts = ["a", "x".repeat(200), "y".repeat(70_000), "é".repeat(63), "z".repeat(126)];
  const stream = Buffer.concat(texts.map((t) => frame(0x1, t)));
  // Cuts one byte into each header, inside the 2- and 8-byte extended lengths, and inside payloads.
  const cuts = new Set<number>();
  let at = 0;
  for (const t of texts) {
    const n = Buffer.byteLength(t);
    const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
    for (const c of [1, 3, 5, head + 1, head + Math.floor(n / 2)]) if (c < head + n) cuts.add(at + c);
    at += head + n;
  }
  const bounds = [0, ...[...cuts].sort((a, b) => a - b), stream.length];
  const srv = await rawServer(async (socket) => {
    for (let i = 1; i < bounds.length; i++) {
      socket.write(stream.subarray(bounds[i - 1], bounds[i]));
      await new Promise((r) => setTimeout(r, 2));
    }
  });
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const got: string[] = [];
  await new Promise<void>((r) =>
    ws.on("bytes", (b) => {
      got.push(b.toString("utf8"));
      if (got.length === texts.length) r();
    }),
  );
  assert.deepEqual(got, texts);
  await closeClient(ws);
  await srv.close();
});

test("a code point split across fragments, and a ping between fragments, leave the message intact", async () => {
  let frames: ClientFrame[] = [];
  const srv = await rawServer((socket, f) => {
    frames = f;
    // "é" is c3 a9: its two bytes go in different frames, with a ping between them.
    socket.write(frame(0x1, Buffer.from([0x61, 0xc3]), { fin: false }));
    socket.write(frame(0x9, "are you there"));
    socket.write(frame(0x0, Buffer.from([0xa9, 0x62])));
  });
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const text = await new Promise<string>((r) => ws.once("message", r));
  assert.equal(text, "aéb");
  while (!frames.some((f) => f.opcode === 0xa)) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(
    frames.map((f) => [f.opcode, f.payload.toString()]),
    [[0xa, "are you there"]],
  );
  await closeClient(ws);
  await srv.close();
});

test("a message of exactly MAX_MESSAGE_BYTES is delivered; one byte more closes with 1009 before its payload arrives", async () => {
  const MiB = 1024 * 1024;
  const chunk = Buffer.alloc(MiB, 0x78);
  const fragments = (): Buffer[] => {
    const out = [frame(0x1, chunk, { fin: false })];
    for (let sent = MiB; sent + MiB <= MAX_MESSAGE_BYTES; sent += MiB) out.push(frame(0x0, chunk, { fin: false }));
    return out;
  };
  const rest = MAX_MESSAGE_BYTES % MiB;
  // At the cap: delivered whole.
  {
    const srv = await rawServer((socket) => {
      for (const f of fragments()) socket.write(f);
      socket.write(frame(0x0, Buffer.alloc(rest, 0x79)));
    });
    const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
    const text = await new Promise<string>((r) => ws.once("message", r));
    assert.equal(text.length, MAX_MESSAGE_BYTES);
    await closeClient(ws);
    await srv.close();
  }
  // One byte over, in the last fragment, whose header says 1 MiB but whose payload is never sent:
  // the client refuses on the header alone.
  const r = await failedBy([...fragments(), frame(0x0, Buffer.alloc(rest, 0x79), { fin: false }), frame(0x0, Buffer.alloc(0), { declaredLength: MiB })]);
  assert.equal(r.sentCode, 1009);
  assert.equal(r.code, 1009);
  assert.deepEqual(r.messages, []);
  // A single frame whose 64-bit length is absurd is refused the same way.
  const huge = frame(0x1, Buffer.alloc(0), { declaredLength: 2 ** 40 });
  assert.equal((await failedBy([huge])).sentCode, 1009);
});

test("send returns false while the socket's buffer is full, and drain fires once the server reads", async () => {
  let serverSocket: Socket | undefined;
  let frames: ClientFrame[] = [];
  const srv = await rawServer((socket, f) => {
    serverSocket = socket;
    frames = f;
    socket.pause();
  });
  const ws = await UnixWebSocket.open(srv.path, "/acp", {}, 2000);
  const big = "x".repeat(256 * 1024);
  let sent = 0;
  let accepted = true;
  while (accepted && sent < 1000) {
    accepted = ws.send(big);
    sent++;
  }
  assert.equal(accepted, false, "send reported the full buffer");
  const drained = new Promise<void>((r) => ws.once("drain", r));
  serverSocket!.resume();
  await drained;
  while (frames.length < sent) await new Promise((r) => setTimeout(r, 5));
  assert.equal(frames.length, sent, "every frame, the one that hit the full buffer too, reached the server");
  assert.ok(frames.every((f) => f.opcode === 0x1 && f.payload.length === big.length));
  await closeClient(ws);
  await srv.close();
});
