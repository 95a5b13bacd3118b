import { test } from "node:test";
import assert from "node:assert/strict";
import { RpcError } from "./jsonrpc.js";
import { errorText } from "./error-text.js";

test("an editor's error data reaches the text: details, message, or the data itself", () => {
  assert.equal(
    errorText(new RpcError(-32603, "Internal error", { details: "Permission denied for fs/write_text_file" })),
    "Internal error: Permission denied for fs/write_text_file",
  );
  assert.equal(errorText(new RpcError(-32603, "Internal error", { message: "disk is read-only" })), "Internal error: disk is read-only");
  assert.equal(errorText(new RpcError(-32002, "Resource not found", { uri: "file:///x" })), 'Resource not found: {"uri":"file:///x"}');
  assert.equal(errorText(new RpcError(-32603, "no such file: a.txt", { details: "no such file" })), "no such file: a.txt", "nothing said twice");
  assert.equal(errorText(new Error("plain")), "plain");
  assert.equal(errorText(RpcError.sessionNotFound("s-1")), "Session not found: s-1", "data that only repeats the message adds nothing");
  assert.equal(errorText(RpcError.methodNotFound("x/y")), "Method not found: x/y");
  assert.equal(errorText("a thrown string"), "a thrown string");
  assert.equal(errorText(undefined), "undefined");
  assert.equal(errorText({ message: "from another realm" }), "from another realm");
  assert.ok(errorText(new RpcError(1, "x", { details: "d".repeat(5000) })).length < 2100);
});
