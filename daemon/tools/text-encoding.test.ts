import { test } from "node:test";
import assert from "node:assert/strict";
import iconv from "iconv-lite";
import { decodeBytes, encodeText, fitsEncoding } from "./text-encoding.js";
import { looksBinary } from "./local-files.js";

test("GBK, Shift_JIS and UTF-16 files are detected and written back to the very same bytes", () => {
  const cases: Array<[string, Buffer]> = [
    ["gb18030", iconv.encode("// 中文注释：这是一个测试文件\nconst 名字 = '张三'; // 返回两数之和\n", "gbk")],
    ["shift_jis", iconv.encode("// こんにちは世界、テストです。\nconst x = 1; // 日本語のコメント\n", "shift_jis")],
    ["utf-16le", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello\r\nwörld\r\n", "utf16le")])],
  ];
  for (const [want, bytes] of cases) {
    const { text, encoding } = decodeBytes(bytes);
    assert.equal(encoding, want);
    assert.ok(!looksBinary(bytes), `${want} is text`);
    assert.ok(encodeText(text, encoding).equals(bytes), `${want} round trip`);
  }
});

test("bytes no detector explains stay Latin-1, one char per byte; UTF-8 stays UTF-8", () => {
  const odd = Buffer.from([0x61, 0xff, 0x62, 0x81, 0x0a]);
  const { text, encoding } = decodeBytes(odd);
  assert.equal(encoding, "latin1");
  assert.ok(encodeText(text, encoding).equals(odd));
  assert.equal(decodeBytes(Buffer.from("\uFEFFé\n")).encoding, "utf8");
});

test("fitsEncoding says when new text cannot be written in the file's encoding", () => {
  assert.equal(fitsEncoding("é", "latin1"), true);
  assert.equal(fitsEncoding("中", "latin1"), false);
  assert.equal(fitsEncoding("中文", "shift_jis"), true);
  assert.equal(fitsEncoding("한국어", "shift_jis"), false);
});
