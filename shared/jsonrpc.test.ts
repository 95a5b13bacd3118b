import { test } from "node:test";
import assert from "node:assert/strict";
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
