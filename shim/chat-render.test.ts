import { test } from "node:test";
import assert from "node:assert/strict";
import { countLines, diffStat, Renderer, usageLine } from "./chat-render.js";

test("diff stats count changed lines, not the trailing newline: a new two-line file is +2", () => {
  assert.deepEqual(diffStat(null, "line one\nline two\n"), { added: 2, removed: 0 });
  assert.deepEqual(diffStat("a\nb\nc\n", "a\nB\nc\n"), { added: 1, removed: 1 });
  assert.deepEqual(diffStat("a\nb\n", ""), { added: 0, removed: 2 });
  assert.equal(countLines("x\ny"), 2);
  assert.equal(countLines(""), 0);
});

test("streamed text and thoughts keep to their own lines; colour only on a terminal", () => {
  let out = "";
  const r = new Renderer((t) => (out += t), false);
  r.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } });
  r.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hi " } });
  r.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "there" } });
  r.update({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a.txt", kind: "read", status: "pending" });
  r.update({
    sessionUpdate: "tool_call_update",
    toolCallId: "t1",
    status: "failed",
    content: [{ type: "content", content: { type: "text", text: "No such file" } }],
  });
  r.update({ sessionUpdate: "available_commands_update", availableCommands: [] });
  r.turnEnded("cancelled", usageLine({ sessionUpdate: "usage_update", used: 1234, size: 1000000, cost: { amount: 0.5, currency: "USD" } }));
  assert.equal(out, "(thinking) hmm\nHi there\n• Read a.txt\n✗ Read a.txt\n    No such file\n1,234 / 1,000,000 tokens · 0.5000 USD (cancelled)\n");
  let colored = "";
  new Renderer((t) => (colored += t), true).update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } });
  assert.match(colored, /\x1b\[2mhmm/);
});
