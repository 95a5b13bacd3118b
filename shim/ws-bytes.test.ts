import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha1Base64 } from "./ws-bytes.js";

test("sha1Base64 agrees with node:crypto across block boundaries and on the RFC 6455 example", () => {
  // RFC 6455 §1.3: the key "dGhlIHNhbXBsZSBub25jZQ==" is accepted as "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
  assert.equal(sha1Base64("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  for (let n = 0; n <= 200; n++) {
    const text = "é".repeat(n % 7) + "a".repeat(n);
    assert.equal(sha1Base64(text), createHash("sha1").update(text, "utf8").digest("base64"), `length ${n}`);
  }
});
