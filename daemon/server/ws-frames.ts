/**
 * Many WebSocket text messages as one buffer of frames, as a server sends them (RFC 6455 §5.2:
 * final, unmasked, opcode 1). A session/load replay sends a window tens of thousands of updates at
 * once; through `WebSocket#send` each is a header buffer and a string the socket encodes in its
 * `writev`, two entries per update, and that, not the JSON, was most of a replay's cost. One
 * buffer per batch is one write. Only for a socket without extensions (no permessage-deflate,
 * which would set RSV1 and compress), whose sender therefore writes every frame at once and
 * queues nothing: frames written beside it stay in order.
 */

/** A frame's header length and its payload's byte length. */
function headerLength(bytes: number): number {
  return bytes < 126 ? 2 : bytes < 65536 ? 4 : 10;
}

export function textFrames(texts: readonly string[]): Buffer {
  const lengths = texts.map((t) => Buffer.byteLength(t));
  let total = 0;
  for (const n of lengths) total += headerLength(n) + n;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  texts.forEach((text, i) => {
    const n = lengths[i]!;
    out[at++] = 0x81;
    if (n < 126) out[at++] = n;
    else if (n < 65536) {
      out[at++] = 126;
      out.writeUInt16BE(n, at);
      at += 2;
    } else {
      out[at++] = 127;
      out.writeBigUInt64BE(BigInt(n), at);
      at += 8;
    }
    at += out.write(text, at, "utf8");
  });
  return out;
}
