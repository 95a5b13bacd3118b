import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, connect, type Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { classify, clipped, ConnectionClosedError, JsonRpcPeer, QUOTE_MAX_CHARS, ResultThen, RpcError, rawTopLevelId } from "./jsonrpc.js";

/** Two peers wired back to back, as over a socket. */
function pair(handlersB: ConstructorParameters<typeof JsonRpcPeer>[1]) {
  const sentByA: string[] = [];
  let b!: JsonRpcPeer;
  const a = new JsonRpcPeer(
    (t) => {
      sentByA.push(t);
      queueMicrotask(() => b.receive(t));
    },
    { request: () => ({}), notification: () => undefined },
  );
  b = new JsonRpcPeer((t) => queueMicrotask(() => a.receive(t)), handlersB);
  return { a, b, sentByA };
}

test("classify tells requests, notifications, responses and invalid messages apart", () => {
  assert.equal(classify('{"jsonrpc":"2.0","id":1,"method":"m"}').kind, "request");
  assert.equal(classify('{"jsonrpc":"2.0","method":"m"}').kind, "notification");
  assert.equal(classify('{"jsonrpc":"2.0","id":1,"result":{}}').kind, "response");
  assert.equal(classify('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}').kind, "error");
  const bad = classify("{nope");
  assert.equal(bad.kind, "invalid");
  assert.equal(bad.kind === "invalid" && bad.error.code, -32700);
  const batch = classify("[]");
  assert.equal(batch.kind === "invalid" && batch.error.code, -32600);
  const noVersion = classify('{"id":4,"method":"m"}');
  assert.equal(noVersion.kind === "invalid" && noVersion.id, 4);
});

test("requests round-trip in both directions; errors keep code and data", async () => {
  const { a } = pair({
    request: (method, params) => {
      if (method === "echo") return params;
      throw RpcError.sessionNotFound("s1");
    },
    notification: () => undefined,
  });
  assert.deepEqual(await a.request("echo", { x: 1 }), { x: 1 });
  await assert.rejects(
    a.request("other", {}),
    (e: unknown) => e instanceof RpcError && e.code === -32002 && (e.data as { sessionId: string }).sessionId === "s1",
  );
});

test("notifications are never answered, even when the handler throws", async () => {
  const out: string[] = [];
  const peer = new JsonRpcPeer((t) => out.push(t), {
    request: () => ({}),
    notification: () => {
      throw new Error("boom");
    },
  });
  peer.receive('{"jsonrpc":"2.0","method":"session/cancel","params":{}}');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(out, []);
});

test("ResultThen runs its effect after the response is written", async () => {
  const out: string[] = [];
  const peer = new JsonRpcPeer((t) => out.push(t), {
    request: () => new ResultThen({ ok: 1 }, () => out.push("after")),
    notification: () => undefined,
  });
  peer.receive('{"jsonrpc":"2.0","id":9,"method":"m"}');
  await new Promise((r) => setImmediate(r));
  assert.equal(JSON.parse(out[0]!).id, 9);
  assert.equal(out[1], "after");
});

test("close rejects pending requests and aborts running handlers", async () => {
  let aborted = false;
  const out: string[] = [];
  const peer = new JsonRpcPeer((t) => out.push(t), {
    request: (_m, _p, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => ((aborted = true), resolve({})))),
    notification: () => undefined,
  });
  peer.receive('{"jsonrpc":"2.0","id":1,"method":"slow"}');
  const pending = peer.request("x", {});
  peer.close();
  await assert.rejects(pending, ConnectionClosedError);
  await new Promise((r) => setImmediate(r));
  assert.equal(aborted, true);
});

test("$/cancel_request aborts the named handler; a request's own abort sends it", async () => {
  const out: string[] = [];
  let seen: AbortSignal | undefined;
  const peer = new JsonRpcPeer((t) => out.push(t), {
    request: (_m, _p, ctx) => {
      seen = ctx.signal;
      return new Promise(() => undefined);
    },
    notification: () => undefined,
  });
  peer.receive('{"jsonrpc":"2.0","id":"r1","method":"slow"}');
  await new Promise((r) => setImmediate(r));
  peer.receive('{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"r1"}}');
  assert.equal(seen?.aborted, true);

  const controller = new AbortController();
  const p = peer.request("long", {}, { signal: controller.signal });
  controller.abort();
  await assert.rejects(p, (e: unknown) => e instanceof RpcError && e.code === -32800);
  assert.ok(out.some((t) => t.includes('"$/cancel_request"')));
});

test("ids beyond JavaScript's safe integers are echoed exactly as they were sent", async () => {
  assert.equal(rawTopLevelId('{"jsonrpc":"2.0","id":18446744073709551617,"method":"x"}'), "18446744073709551617");
  assert.equal(rawTopLevelId('{"params":{"id":1,"nested":[{"id":2}]},"id" : 123456789012345678901234,"jsonrpc":"2.0"}'), "123456789012345678901234");
  assert.equal(rawTopLevelId('{"method":"a\\"id\\":5","id":-9.5e300}'), "-9.5e300");
  assert.equal(rawTopLevelId('{"id":"s"}'), undefined);
  const sent: string[] = [];
  const peer = new JsonRpcPeer((t) => sent.push(t), { request: () => ({ ok: true }), notification: () => undefined });
  peer.receive('{"jsonrpc":"2.0","id":18446744073709551617,"method":"anything","params":{}}');
  peer.receive('{"jsonrpc":"2.0","id":9007199254740993,"method":"nope"');
  await new Promise((r) => setImmediate(r));
  assert.ok(sent.includes('{"jsonrpc":"2.0","id":18446744073709551617,"result":{"ok":true}}'), sent.join("\n"));
  assert.ok(
    sent.some((l) => JSON.parse(l).error?.code === -32700),
    "a broken line is still -32700",
  );
});

test("error messages quote a caller's huge session id or method clipped, once; data keeps it exact", () => {
  const id = "s".repeat(2 * 1024 * 1024);
  for (const err of [RpcError.of("VendorUnknownSession", id, { sessionId: id }), RpcError.sessionNotFound(id), RpcError.methodNotFound(id)]) {
    assert.ok(err.message.length < QUOTE_MAX_CHARS + 80, `${err.code}: a message of ${err.message.length} characters`);
    assert.match(err.message, /s… \(2097152 characters\)$/);
    const wire = JSON.stringify(err.toObject());
    assert.ok(wire.length < id.length + 1000, `${err.code}: the id comes back once, not twice (${wire.length} characters)`);
    assert.equal(Object.values(err.data as object)[0], id);
  }
  assert.equal(RpcError.of("VendorUnknownSession", "abc").message, "Invalid params: sessionId: unknown session abc");
  assert.equal(clipped("x".repeat(QUOTE_MAX_CHARS)), "x".repeat(QUOTE_MAX_CHARS));
  // A surrogate pair across the cut is left out whole, never halved.
  const emoji = `${"x".repeat(QUOTE_MAX_CHARS - 1)}😀tail`;
  assert.equal(clipped(emoji), `${"x".repeat(QUOTE_MAX_CHARS - 1)}… (${emoji.length} characters)`);
});

/**
 * A peer over a real Unix socket to a raw server: `answer` gets each request line and the server's
 * socket, so a test can answer through real I/O (what a timer races in a starved process).
 */
async function overSocket(t: { after(fn: () => unknown): void }, answer: (line: string, socket: Socket) => void): Promise<JsonRpcPeer> {
  const dir = mkdtempSync(join(tmpdir(), "rx-rpc-"));
  const path = join(dir, "s.sock");
  const server = createServer((socket) => {
    let buf = "";
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => {
      buf += c;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        answer(buf.slice(0, nl), socket);
        buf = buf.slice(nl + 1);
      }
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  const client = connect({ path });
  await new Promise((r) => client.once("connect", r));
  const peer = new JsonRpcPeer((text) => client.write(`${text}\n`), { request: () => ({}), notification: () => undefined });
  let buf = "";
  client.setEncoding("utf8");
  client.on("data", (c: string) => {
    buf += c;
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      peer.receive(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  t.after(async () => {
    client.destroy();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  return peer;
}

test("a request with a bound and no answer rejects, naming the method and the bound", async (t) => {
  const peer = await overSocket(t, () => undefined);
  await assert.rejects(peer.request("fs/read_text_file", {}, { timeoutMs: 100 }), /fs\/read_text_file got no answer within 100 ms/);
});

test("an answer that arrived while the process was stalled past the bound is taken, not called missing", async (t) => {
  let stalledMs = 0;
  const peer = await overSocket(t, (line, socket) => {
    const { id } = JSON.parse(line) as { id: number };
    socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, result: { content: "ok" } })}\n`);
    // The answer is in the requester's socket; now the whole process is busy past its bound.
    const from = Date.now();
    while (Date.now() - from < 500);
    stalledMs = Date.now() - from;
  });
  assert.deepEqual(await peer.request("fs/read_text_file", {}, { timeoutMs: 200 }), { content: "ok" });
  assert.ok(stalledMs >= 500);
});
