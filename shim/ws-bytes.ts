/**
 * The bytes the shim's WebSocket client makes (ws-client.ts): the handshake's nonce, the upgrade
 * request, the masked frames, and the SHA-1 that checks the server's Sec-WebSocket-Accept (RFC 6455 §4.2.2). Without
 * node:crypto, whose fourteen internal modules were 3-10 ms of a warm start; these cost microseconds.
 */

/**
 * Random bytes for the handshake's nonce and the frames' masks, from Math.random (V8 seeds it from
 * the system's entropy at start). Both guard against
 * caching intermediaries fed by a hostile script (RFC 6455 §10.3), of which a private Unix socket
 * to our own daemon has none; who is at the other end is settled by the socket's ownership checks
 * (shared/paths.ts), not by these bytes.
 */
function randomBytes(into: Buffer): Buffer {
  for (let i = 0; i < into.length; i += 4) {
    const r = (Math.random() * 0x100000000) >>> 0;
    for (let j = 0; j < 4 && i + j < into.length; j++) into[i + j] = (r >>> (8 * j)) & 0xff;
  }
  return into;
}

export const handshakeKey = (): string => randomBytes(Buffer.allocUnsafe(16)).toString("base64");

/** One masked client frame (RFC 6455 §5.3: clients must mask; the server rejects unmasked frames). */
export function clientFrame(opcode: number, payload: Buffer): Buffer {
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
  const mask = randomBytes(frame.subarray(headLen, headLen + 4));
  for (let i = 0; i < len; i++) frame[headLen + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

/** The upgrade request for `path`, with `frames` (text messages, masked) right behind it, as one write. */
export function upgradeRequest(path: string, key: string, headers: Record<string, string>, frames: readonly string[]): Buffer {
  const lines = [
    `GET ${path} HTTP/1.1`,
    "Host: localhost",
    "Upgrade: websocket",
    "Connection: Upgrade",
    `Sec-WebSocket-Key: ${key}`,
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  const request = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`);
  return frames.length === 0 ? request : Buffer.concat([request, ...frames.map((text) => clientFrame(0x1, Buffer.from(text, "utf8")))]);
}

/**
 * The SHA-1 (FIPS 180-4) of `text`'s UTF-8 bytes, base64-encoded: the accept check hashes a
 * 60-character key. Nothing secret rides on it: it only confirms that the server read the request
 * as a WebSocket upgrade.
 */
export function sha1Base64(text: string): string {
  const msg = Buffer.from(text, "utf8");
  const bits = msg.length * 8;
  // The message, a 1 bit, zeros, and its length in bits as 64 bits: a whole number of 64-byte blocks.
  const padded = Buffer.alloc((((msg.length + 8) >> 6) + 1) << 6);
  msg.copy(padded);
  padded[msg.length] = 0x80;
  padded.writeUInt32BE(Math.floor(bits / 0x100000000), padded.length - 8);
  padded.writeUInt32BE(bits >>> 0, padded.length - 4);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89;
  let h2 = 0x98badcfe;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0;
  const w = new Int32Array(80);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = padded.readInt32BE(block + i * 4);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
      w[i] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    for (let i = 0; i < 80; i++) {
      const f = i < 20 ? (b & c) | (~b & d) : i < 40 ? b ^ c ^ d : i < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
      const k = i < 20 ? 0x5a827999 : i < 40 ? 0x6ed9eba1 : i < 60 ? 0x8f1bbcdc : 0xca62c1d6;
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  const out = Buffer.allocUnsafe(20);
  [h0, h1, h2, h3, h4].forEach((h, i) => out.writeInt32BE(h, i * 4));
  return out.toString("base64");
}
