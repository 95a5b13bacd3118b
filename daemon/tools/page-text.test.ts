import { test } from "node:test";
import assert from "node:assert/strict";
import iconv from "iconv-lite";
import { pageText } from "./page-text.js";

const live = new AbortController().signal;

test("HTML becomes Markdown on the worker thread, its charset honoured and links made absolute", async () => {
  const html = `<html><head><meta charset="gbk"><title>文档</title></head><body><h2>用法</h2><p><a href="b.html">下一页</a></p></body></html>`;
  const r = await pageText("text/html", iconv.encode(html, "gbk"), "https://example.com/a/", live);
  assert.deepEqual(r, { ok: true, text: "## 用法\n\n[下一页](https://example.com/a/b.html)", title: "文档", html: true });
});

test("plain text and JSON pass through; other types are refused; a cancelled conversion ends", async () => {
  assert.deepEqual(await pageText("application/json", Buffer.from('{"a":1}'), "https://x/", live), {
    ok: true,
    text: '{"a":1}',
    title: undefined,
    html: false,
  });
  const image = await pageText("image/png", Buffer.from([0x89, 0x50]), "https://x/", live);
  assert.deepEqual(image, { ok: false, reason: "the response is image/png, not a text page; web_fetch returns HTML and text only" });
  await assert.rejects(pageText("text/html", Buffer.from("<p>x</p>"), "https://x/", AbortSignal.abort()), /cancelled/);
});

test("a page of 300 KB of `<title` repeated converts on the worker: no title, no text", { timeout: 20_000 }, async () => {
  const r = await pageText("text/html", Buffer.from("<title".repeat(50_000)), "https://x/", live);
  assert.deepEqual(r, { ok: true, text: "", title: undefined, html: true });
});
