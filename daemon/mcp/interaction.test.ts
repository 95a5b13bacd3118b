import { test } from "node:test";
import assert from "node:assert/strict";
import { settleReply, type InteractionRequest } from "./interaction.js";

const form: InteractionRequest = {
  server: "s",
  mode: "form",
  message: "m",
  requestedSchema: {
    type: "object",
    properties: {
      environment: { type: "string", enum: ["staging", "production"] },
      replicas: { type: "integer", minimum: 1, maximum: 5 },
      force: { type: "boolean" },
    },
    required: ["environment"],
  },
};

test("form replies: valid content passes; content that does not fit the schema cancels; decline and cancel carry nothing", () => {
  assert.deepEqual(settleReply(form, { action: "accept", content: { environment: "staging", replicas: 2 } }), {
    action: "accept",
    content: { environment: "staging", replicas: 2 },
  });
  for (const content of [
    { environment: "moon" },
    { replicas: 2 },
    { environment: "staging", replicas: 9 },
    { environment: "staging", replicas: 1.5 },
    { environment: "staging", extra: "x" },
    "nope",
    null,
  ]) {
    assert.deepEqual(settleReply(form, { action: "accept", content }), { action: "cancel" }, JSON.stringify(content));
  }
  assert.deepEqual(settleReply(form, { action: "decline", content: { environment: "staging" } }), { action: "decline" });
  assert.deepEqual(settleReply(form, { action: "cancel" }), { action: "cancel" });
  for (const malformed of [undefined, null, {}, { action: "yes" }, "accept", 42]) assert.deepEqual(settleReply(form, malformed), { action: "cancel" });
});

test("a URL flow's accept never carries content: credentials stay in the browser", () => {
  const url: InteractionRequest = { server: "s", mode: "url", message: "Sign in", url: "https://auth.example", elicitationId: "e1" };
  assert.deepEqual(settleReply(url, { action: "accept", content: { password: "hunter2" } }), { action: "accept" });
});
