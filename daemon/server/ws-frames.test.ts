import { test } from "node:test";
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { WebSocket, WebSocketServer } from "ws";
import { textFrame, textFrames } from "./ws-frames.js";

test("frames written beside ws's own arrive as the messages they hold, in order, at every length, with or without an envelope around each", async (t) => {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  t.after(() => server.close());
  await new Promise((r) => server.once("listening", r));
  const texts = ["", "short", "é".repeat(70), "x".repeat(125), "y".repeat(126), "中".repeat(30_000), "z".repeat(65_536), "🎉".repeat(20_000)];
  server.on("connection", (socket, req) => {
    socket.send("before");
    (req.socket as Socket).write(textFrames(texts));
    (req.socket as Socket).write(textFrames(texts, { head: '{"é":', tail: "}" }));
    for (const text of texts) (req.socket as Socket).write(textFrame(text));
    socket.send("after");
  });
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as { port: number }).port}`);
  t.after(() => client.terminate());
  const got: string[] = [];
  await new Promise<void>((resolve, reject) => {
    client.on("error", reject);
    client.on("message", (data, isBinary) => {
      assert.equal(isBinary, false);
      got.push(data.toString());
      if (got.length === 3 * texts.length + 2) resolve();
    });
  });
  assert.deepEqual(got, ["before", ...texts, ...texts.map((text) => `{"é":${text}}`), ...texts, "after"]);
  for (const text of texts) assert.deepEqual(textFrame(text), textFrames([text]), "one frame is the batch of one");
});
