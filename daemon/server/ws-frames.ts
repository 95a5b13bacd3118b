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

/** Writes the header of a final text frame of `n` payload bytes at `at`; returns where the payload goes. */
function writeHeader(out: Buffer, at: number, n: number): number {
  out[at++] = 0x81;
  if (n < 126) out[at++] = n;
  else if (n < 65536) {
    out[at++] = 126;
    out[at++] = n >>> 8;
    out[at++] = n & 0xff;
  } else {
    out[at++] = 127;
    out.writeBigUInt64BE(BigInt(n), at);
    at += 8;
  }
  return at;
}

/**
 * One text message as one frame in one buffer. `WebSocket#send` writes a header and the text as
 * two writes, after working out its options and lengths for each call: 6–9 µs of a streamed
 * chunk's ~110 µs in the daemon, with fifty sessions streaming.
 */
export function textFrame(text: string): Buffer {
  const n = Buffer.byteLength(text);
  const out = Buffer.allocUnsafe(headerLength(n) + n);
  out.write(text, writeHeader(out, 0, n), "utf8");
  return out;
}

/** What every message of a batch starts and ends with around its own text (a notification's envelope). */
export interface Around {
  head: string;
  tail: string;
}

/**
 * One frame per text, each message `around.head + text + around.tail`: the envelope is encoded
 * once and copied, so no joined string is made (and flattened) per message.
 */
export function textFrames(texts: readonly string[], around: Around = { head: "", tail: "" }): Buffer {
  const head = Buffer.from(around.head);
  const tail = Buffer.from(around.tail);
  const fixed = head.length + tail.length;
  const lengths = new Array<number>(texts.length);
  let total = 0;
  for (let i = 0; i < texts.length; i++) {
    const n = fixed + Buffer.byteLength(texts[i]!);
    lengths[i] = n;
    total += headerLength(n) + n;
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    at = writeHeader(out, at, lengths[i]!);
    // Byte by byte: Buffer#copy's checks cost more than these few dozen bytes.
    for (let j = 0; j < head.length; j++) out[at++] = head[j]!;
    at += out.write(texts[i]!, at, "utf8");
    for (let j = 0; j < tail.length; j++) out[at++] = tail[j]!;
  }
  return out;
}
