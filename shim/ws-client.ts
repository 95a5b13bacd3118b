/**
 * A minimal RFC 6455 WebSocket client over a Unix socket, for the shim only: text frames, ping/pong,
 * close. It is strict about what it receives: a protocol error closes with 1002, a binary frame with
 * 1003, text that is not UTF-8 with 1007, a message over `MAX_MESSAGE_BYTES` with 1009; the caller
 * sees an `error` (when it listens) and then `close` with that code. The `ws` package takes ~45 ms to load on our 2-core machines (it pulls in http, https and
 * tls), a third of the warm-start budget; this file loads in about a millisecond. The daemon keeps
 * the full `ws` server behind @fastify/websocket, and tests talk to it with `ws`, so the two stay
 * honest against each other.
 */
import { afterBound } from "../shared/bound.js";
import { isUtf8 } from "node:buffer";
import { connect, type Socket } from "node:net";
import { EventEmitter } from "node:events";
import { MAX_LINE_BYTES } from "../shared/ndjson.js";
import { clientFrame, handshakeKey, sha1Base64, upgradeRequest } from "./ws-bytes.js";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** The largest message taken, whole or in fragments: the NDJSON line limit plus the daemon's slack (WS_MAX_PAYLOAD). */
export const MAX_MESSAGE_BYTES = MAX_LINE_BYTES + 1024;
/** The receive queue never holds more than one unfinished frame: a message's bytes and its longest header. */
const MAX_QUEUE_BYTES = MAX_MESSAGE_BYTES + 14;

/** The connection was failed for what the server sent; `code` is the close code sent to it. */
export class WebSocketProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "WebSocketProtocolError";
  }
}

export class HandshakeError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HandshakeError";
  }
}

/**
 * Bytes received but not yet parsed, kept as a chunk list so large frames are not re-copied. The
 * first chunk is read from `pos` on rather than cut to a new view at every frame taken from it.
 */
class ByteQueue {
  private chunks: Buffer[] = [];
  private pos = 0;
  length = 0;

  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  /**
   * The byte at `i` (i < length), read where it lies: a frame header is parsed without a view
   * object per field (during a replay, a header per update, a hundred thousand of them).
   */
  byte(i: number): number {
    i += this.pos;
    for (let k = 0; k < this.chunks.length; k++) {
      const c = this.chunks[k]!;
      if (i < c.length) return c[i]!;
      i -= c.length;
    }
    return 0;
  }

  /** Drops the first `skip` bytes and takes the `n` after them (skip + n <= length), copying only the chunks they span. */
  take(skip: number, n: number): Buffer {
    const first = this.chunks[0];
    const end = this.pos + skip + n;
    this.length -= skip + n;
    if (first && first.length >= end) {
      const out = first.subarray(this.pos + skip, end);
      if (first.length === end) {
        this.chunks.shift();
        this.pos = 0;
      } else this.pos = end;
      return out;
    }
    // The first chunk's bytes already taken are left out of the copy.
    if (first) this.chunks[0] = first.subarray(this.pos);
    const all = Buffer.concat(this.chunks, this.length + skip + n);
    this.chunks = all.length > skip + n ? [all] : [];
    this.pos = this.chunks.length > 0 ? skip + n : 0;
    return all.subarray(skip, skip + n);
  }
}

export interface UnixWebSocketEvents {
  message: [text: string];
  /**
   * The same message as its UTF-8 bytes (already checked), for a listener that only passes it on:
   * when one listens, "message" is not emitted, so nothing is decoded only to be encoded again.
   */
  bytes: [data: Buffer];
  close: [code: number, reason: string];
  error: [err: Error];
  /** The socket's write buffer emptied after a `send` returned false. */
  drain: [];
}

export class UnixWebSocket extends EventEmitter<UnixWebSocketEvents> {
  private readonly queue = new ByteQueue();
  private fragments: Buffer[] = [];
  /** A fragmented text message has begun; `fragmentBytes` is its size so far. */
  private inMessage = false;
  private fragmentBytes = 0;
  /** Set once the connection is failed: nothing more is parsed. */
  private failed = false;
  private closed = false;
  private closing: { code: number; reason: string } | undefined;

  private constructor(private readonly socket: Socket) {
    super();
  }

  /**
   * Opens `path` on the socket and upgrades; rejects with the server's reason on refusal. `first`,
   * asked once the socket is connected, names messages to send right behind the upgrade request,
   * without waiting for the 101: the server reads them as the upgrade's first bytes, and the round
   * trip of the handshake is off the start's path. Once the open settles they are sent (the caller
   * counts them); on a refusal the server never reads them.
   */
  static open(socketPath: string, path: string, headers: Record<string, string>, timeoutMs: number, first?: () => readonly string[]): Promise<UnixWebSocket> {
    return new Promise((resolve, reject) => {
      const key = handshakeKey();
      const socket = connect({ path: socketPath });
      let settled = false;
      // A shim reading a 32 MiB line as it starts, under load, had timed out a 101 already in its socket.
      const timer = afterBound(timeoutMs, () => {
        if (!settled) socket.destroy(Object.assign(new Error(`no WebSocket upgrade within ${timeoutMs} ms`), { code: "ETIMEDOUT" }));
      });
      let head = Buffer.alloc(0);
      const fail = (err: Error): void => {
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners();
        socket.on("error", () => undefined);
        socket.destroy();
        reject(err);
      };
      socket.once("error", fail);
      // A daemon that is stopping drops a connection unanswered: say so now, not at the bound.
      const closedEarly = (): void => fail(Object.assign(new Error("the daemon closed the connection before answering the upgrade"), { code: "ECONNRESET" }));
      socket.once("close", closedEarly);
      let accept = "";
      socket.once("connect", () => {
        socket.write(upgradeRequest(path, key, headers, first?.() ?? []));
        // Worked out while the daemon answers, off the path of its answer.
        accept = sha1Base64(key + GUID);
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
          socket.removeListener("close", closedEarly);
          socket.once("close", finish);
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
        if (header("sec-websocket-accept") !== accept) {
          fail(new HandshakeError(status, "the daemon's WebSocket handshake did not match"));
          return;
        }
        settled = true;
        clearTimeout(timer);
        socket.removeListener("data", onData);
        socket.removeListener("error", fail);
        socket.removeListener("close", closedEarly);
        resolve(UnixWebSocket.upgraded(socket, rest));
      };
      socket.on("data", onData);
    });
  }

  /** The WebSocket over a socket the server has upgraded; `rest`: the bytes that came behind the 101. */
  private static upgraded(socket: Socket, rest: Buffer): UnixWebSocket {
    socket.setNoDelay(true);
    const ws = new UnixWebSocket(socket);
    socket.on("data", (c: Buffer) => ws.onData(c));
    // `close` always follows, so an error nobody listens for must not throw.
    socket.on("error", (err) => {
      if (ws.listenerCount("error") > 0) ws.emit("error", err);
    });
    socket.on("drain", () => ws.emit("drain"));
    socket.on("close", () => ws.finish(ws.closing?.code ?? 1006, ws.closing?.reason ?? "connection lost"));
    // Frames that came with the 101 wait until the caller has had its turn to add listeners.
    if (rest.length > 0) {
      ws.queue.push(rest);
      setImmediate(() => ws.onData(Buffer.alloc(0)));
    }
    return ws;
  }

  /**
   * Sends one text frame. Returns false when the frame had to wait behind a full socket buffer: send
   * no more until `drain`. After close the text is dropped (true: there is nothing to wait for).
   */
  send(text: string): boolean {
    if (this.closed || this.closing) return true;
    return this.writeFrame(0x1, Buffer.from(text, "utf8"));
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

  /** Drops the connection without a close frame, as a process exit would; `close` (1006) follows. */
  destroy(): void {
    this.socket.destroy();
  }

  /** Stops reading from the daemon while the editor is slow; resume() starts again. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private writeFrame(opcode: number, payload: Buffer): boolean {
    return this.socket.write(clientFrame(opcode, payload));
  }

  /**
   * Fails the connection (RFC 6455 §7.1.7) for what the server sent: a close frame with `code`, then
   * the socket is ended and dropped; `close` follows with `code` once it is gone.
   */
  private fail(code: number, reason: string): void {
    if (this.failed || this.closed) return;
    this.failed = true;
    this.fragments = [];
    this.inMessage = false;
    this.fragmentBytes = 0;
    if (this.listenerCount("error") > 0) this.emit("error", new WebSocketProtocolError(code, reason));
    if (!this.closing) {
      this.closing = { code, reason };
      const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
      payload.writeUInt16BE(code, 0);
      payload.write(reason, 2);
      this.writeFrame(0x8, payload);
    }
    this.socket.end(() => this.socket.destroy());
    // A server that stops reading would keep the close frame (and `end`) waiting for ever.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  /** The reason to fail on this frame header, or undefined when it is acceptable. */
  private refuse(b0: number, b1: number, len: number): [number, string] | undefined {
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    if ((b0 & 0x70) !== 0) return [1002, "RSV bits set without an extension"];
    if ((b1 & 0x80) !== 0) return [1002, "a masked frame from the server"];
    if (opcode >= 0x8) {
      if (opcode > 0xa) return [1002, `unknown opcode ${opcode}`];
      if (!fin) return [1002, "a fragmented control frame"];
      if ((b1 & 0x7f) > 125) return [1002, "a control frame longer than 125 bytes"];
      if (opcode === 0x8 && len === 1) return [1002, "a close frame with a 1-byte payload"];
      return undefined;
    }
    if (opcode > 0x2) return [1002, `unknown opcode ${opcode}`];
    if (opcode === 0x0 && !this.inMessage) return [1002, "a continuation frame with no message started"];
    if (opcode !== 0x0 && this.inMessage) return [1002, "a new data frame inside a fragmented message"];
    if (opcode === 0x2) return [1003, "binary frames are not supported"];
    if (this.fragmentBytes + len > MAX_MESSAGE_BYTES) return [1009, `a message over ${MAX_MESSAGE_BYTES} bytes`];
    return undefined;
  }

  private onData(chunk: Buffer): void {
    if (this.failed) return;
    this.queue.push(chunk);
    for (;;) {
      if (this.failed || this.queue.length < 2) break;
      const b0 = this.queue.byte(0);
      const b1 = this.queue.byte(1);
      const fin = (b0 & 0x80) !== 0;
      const opcode = b0 & 0x0f;
      let len = b1 & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (this.queue.length < 4) break;
        len = (this.queue.byte(2) << 8) | this.queue.byte(3);
        offset = 4;
      } else if (len === 127) {
        if (this.queue.length < 10) break;
        let big = 0n;
        for (let i = 2; i < 10; i++) big = (big << 8n) | BigInt(this.queue.byte(i));
        // Anything over the cap is refused below; keep the number exact up to there.
        len = big > BigInt(MAX_QUEUE_BYTES) ? MAX_QUEUE_BYTES + 1 : Number(big);
        offset = 10;
      }
      // Checked on the header, before the payload is waited for: an oversize frame is never buffered.
      const refused = this.refuse(b0, b1, len);
      if (refused) {
        this.fail(...refused);
        break;
      }
      const total = offset + len;
      if (this.queue.length < total) break;
      this.onFrame(fin, opcode, this.queue.take(offset, len));
    }
    if (this.queue.length > MAX_QUEUE_BYTES) this.fail(1009, "the receive queue is over its limit");
  }

  private onFrame(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case 0x0:
      case 0x1: {
        this.fragments.push(payload);
        this.fragmentBytes += payload.length;
        this.inMessage = !fin;
        if (!fin) return;
        const bytes = this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments, this.fragmentBytes);
        this.fragments = [];
        this.fragmentBytes = 0;
        if (!isUtf8(bytes)) {
          this.fail(1007, "a text message that is not valid UTF-8");
          return;
        }
        if (this.listenerCount("bytes") > 0) this.emit("bytes", bytes);
        else this.emit("message", bytes.toString("utf8"));
        return;
      }
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
        return; // pong: nothing to do
    }
  }

  private finish(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.emit("close", code, reason);
  }
}
