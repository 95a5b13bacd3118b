/**
 * A minimal RFC 6455 WebSocket client over a Unix socket, for the shim only: text frames, ping/pong,
 * close. The `ws` package takes ~45 ms to load on our 2-core machines (it pulls in http, https and
 * tls), a third of the warm-start budget; this file loads in about a millisecond. The daemon keeps
 * the full `ws` server behind @fastify/websocket, and tests talk to it with `ws`, so the two stay
 * honest against each other.
 */
import { connect, type Socket } from "node:net";
import { createHash, randomBytes, randomFillSync } from "node:crypto";
import { EventEmitter } from "node:events";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export class HandshakeError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HandshakeError";
  }
}

/** Bytes received but not yet parsed, kept as a chunk list so large frames are not re-copied. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;

  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  peek(n: number): Buffer {
    if (this.chunks[0] && this.chunks[0].length >= n) return this.chunks[0].subarray(0, n);
    return Buffer.concat(this.chunks, this.length).subarray(0, n);
  }

  take(n: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.length -= n;
      return out;
    }
    const all = Buffer.concat(this.chunks, this.length);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.length -= n;
    return all.subarray(0, n);
  }
}

export interface UnixWebSocketEvents {
  message: [text: string];
  close: [code: number, reason: string];
  error: [err: Error];
}

export class UnixWebSocket extends EventEmitter<UnixWebSocketEvents> {
  private readonly queue = new ByteQueue();
  private fragments: Buffer[] = [];
  private closed = false;
  private closing: { code: number; reason: string } | undefined;

  private constructor(private readonly socket: Socket) {
    super();
  }

  /** Opens `path` on the socket and upgrades; rejects with the server's reason on refusal. */
  static open(socketPath: string, path: string, headers: Record<string, string>, timeoutMs: number): Promise<UnixWebSocket> {
    return new Promise((resolve, reject) => {
      const key = randomBytes(16).toString("base64");
      const socket = connect({ path: socketPath });
      const timer = setTimeout(() => socket.destroy(Object.assign(new Error(`no WebSocket upgrade within ${timeoutMs} ms`), { code: "ETIMEDOUT" })), timeoutMs);
      let head = Buffer.alloc(0);
      const fail = (err: Error): void => {
        clearTimeout(timer);
        socket.removeAllListeners();
        socket.on("error", () => undefined);
        socket.destroy();
        reject(err);
      };
      socket.once("error", fail);
      socket.once("connect", () => {
        const lines = [
          `GET ${path} HTTP/1.1`,
          "Host: localhost",
          "Upgrade: websocket",
          "Connection: Upgrade",
          `Sec-WebSocket-Key: ${key}`,
          "Sec-WebSocket-Version: 13",
          ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        ];
        socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      });
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf("\r\n\r\n");
        if (end === -1) return;
        const text = head.subarray(0, end).toString("latin1");
        const rest = head.subarray(end + 4);
        const [statusLine, ...fields] = text.split("\r\n");
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1] ?? 0);
        const header = (name: string): string | undefined =>
          fields
            .find((f) => f.toLowerCase().startsWith(`${name}:`))
            ?.slice(name.length + 1)
            .trim();
        if (status !== 101) {
          // Read the body for the refusal reason, as far as Content-Length says.
          const want = Number(header("content-length") ?? 0);
          let body = rest;
          const finish = (): void => {
            let reason = body.toString("utf8");
            try {
              reason = (JSON.parse(reason) as { error?: string }).error ?? reason;
            } catch {
              // plain text
            }
            fail(new HandshakeError(status, `the daemon refused the connection (HTTP ${status}): ${reason}`));
          };
          socket.removeListener("data", onData);
          if (body.length >= want) {
            finish();
            return;
          }
          socket.on("data", (c: Buffer) => {
            body = Buffer.concat([body, c]);
            if (body.length >= want) finish();
          });
          socket.once("end", finish);
          return;
        }
        const expected = createHash("sha1")
          .update(key + GUID)
          .digest("base64");
        if (header("sec-websocket-accept") !== expected) {
          fail(new HandshakeError(status, "the daemon's WebSocket handshake did not match"));
          return;
        }
        clearTimeout(timer);
        socket.removeListener("data", onData);
        socket.removeListener("error", fail);
        socket.setNoDelay(true);
        const ws = new UnixWebSocket(socket);
        socket.on("data", (c: Buffer) => ws.onData(c));
        socket.on("error", (err) => ws.emit("error", err));
        socket.on("close", () => ws.finish(ws.closing?.code ?? 1006, ws.closing?.reason ?? "connection lost"));
        resolve(ws);
        if (rest.length > 0) ws.onData(rest);
      };
      socket.on("data", onData);
    });
  }

  send(text: string): void {
    if (this.closed || this.closing) return;
    this.writeFrame(0x1, Buffer.from(text, "utf8"));
  }

  close(code = 1000, reason = ""): void {
    if (this.closed || this.closing) return;
    this.closing = { code, reason };
    const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2);
    this.writeFrame(0x8, payload);
    this.socket.end();
  }

  /** Stops reading from the daemon while the editor is slow; resume() starts again. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private writeFrame(opcode: number, payload: Buffer): void {
    const len = payload.length;
    const headLen = len < 126 ? 2 : len < 65536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(headLen + 4 + len);
    frame[0] = 0x80 | opcode;
    if (len < 126) frame[1] = 0x80 | len;
    else if (len < 65536) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(len, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(len), 2);
    }
    // Clients must mask (RFC 6455 §5.3); the server rejects unmasked frames.
    const mask = frame.subarray(headLen, headLen + 4);
    randomFillSync(mask);
    for (let i = 0; i < len; i++) frame[headLen + 4 + i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(frame);
  }

  private onData(chunk: Buffer): void {
    this.queue.push(chunk);
    for (;;) {
      if (this.queue.length < 2) return;
      const h = this.queue.peek(2);
      const fin = (h[0]! & 0x80) !== 0;
      const opcode = h[0]! & 0x0f;
      const masked = (h[1]! & 0x80) !== 0;
      let len = h[1]! & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (this.queue.length < 4) return;
        len = this.queue.peek(4).readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (this.queue.length < 10) return;
        len = Number(this.queue.peek(10).readBigUInt64BE(2));
        offset = 10;
      }
      const total = offset + (masked ? 4 : 0) + len;
      if (this.queue.length < total) return;
      const frame = this.queue.take(total);
      let payload = frame.subarray(offset + (masked ? 4 : 0));
      if (masked) {
        const mask = frame.subarray(offset, offset + 4);
        payload = Buffer.from(payload);
        for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i & 3]!;
      }
      this.onFrame(fin, opcode, payload);
    }
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case 0x0:
      case 0x1:
        this.fragments.push(payload);
        if (fin) {
          const text = (this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments)).toString("utf8");
          this.fragments = [];
          this.emit("message", text);
        }
        return;
      case 0x8: {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.length > 2 ? payload.subarray(2).toString("utf8") : "";
        if (!this.closed && !this.closing) {
          this.writeFrame(0x8, payload.subarray(0, 2));
          this.socket.end();
        }
        this.finish(code, reason);
        return;
      }
      case 0x9:
        this.writeFrame(0xa, payload);
        return;
      default:
        return; // pong and binary frames carry nothing for us
    }
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.emit("close", code, reason);
  }
}
