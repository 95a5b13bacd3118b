import { test } from "node:test";
import assert from "node:assert/strict";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { LedgerMessageIds } from "./message-ids.js";
import { replayTexts } from "./replay-text.js";
import type { LedgerBody, LedgerEntry } from "./types.js";

/** What replay sent before it read records as text: the parsed record's updates, each through JSON.stringify. */
function sentBefore(entries: LedgerEntry[]): string[] {
  const ids = new LedgerMessageIds("s1");
  const out: string[] = [];
  for (const e of entries) {
    const messageId = ids.next(e.seq, e.type === "update" ? e.update : undefined);
    if (e.type !== "update") continue;
    const own = (e.update as { messageId?: unknown }).messageId;
    const first = typeof own === "string" || messageId === undefined ? e.update : { ...e.update, messageId };
    out.push(JSON.stringify(first));
    const shared = (first as { messageId?: unknown }).messageId;
    for (const text of e.more ?? []) {
      out.push(
        JSON.stringify({
          sessionUpdate: e.update.sessionUpdate,
          content: { type: "text", text },
          ...(typeof shared === "string" ? { messageId: shared } : {}),
        }),
      );
    }
  }
  return out;
}

const at = "2026-12-01T10:00:00.000Z";
const chunk = (text: string, messageId?: string): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text },
  ...(messageId ? { messageId } : {}),
});

test("records read as text replay exactly what parsing them sent, however their texts are made", () => {
  const tricky = ["plain", '"}', ',"seq":7,"at":"x"}', "back\\slash\\\\", '\\"}', "ünïcødé 中文 🎉", "{[", "]}", "\n\t\u0001"];
  const bodies: LedgerBody[] = [
    { type: "turn_start", turnId: "t1" },
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" }, messageId: "u1" }, historyAt: 1 },
    ...tricky.map((text) => ({ type: "update" as const, update: chunk(text, "m1"), historyAt: 2 })),
    { type: "update", update: chunk("joined", "m1"), more: tricky, historyAt: 2, compactions: 3 },
    // Chunks stored before message ids: one run, its id derived on replay.
    { type: "update", update: chunk("old 1") },
    { type: "update", update: chunk("old 2"), more: ["old 3"] },
    { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thought" } } },
    // An id further in is not the chunk's own.
    { type: "update", update: { ...chunk("meta"), _meta: { x: { messageId: "nested" } } } as SessionUpdate },
    {
      type: "update",
      update: { sessionUpdate: "tool_call", toolCallId: "c1", title: 'read "a}.ts"', kind: "read", status: "pending", rawInput: { seq: 1, at: "}" } },
    },
    {
      type: "update",
      update: {
        sessionUpdate: "tool_call_update",
        toolCallId: "c1",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: tricky.join("") } }],
      },
    },
    { type: "update", update: { sessionUpdate: "plan", entries: [{ content: "x", priority: "high", status: "pending" }] }, historyAt: 4 },
    { type: "permission", toolCallId: "c1", outcome: "allow_once" },
    { type: "interrupted" },
    { type: "turn_end", turnId: "t1", stopReason: "end_turn" },
  ];
  const entries = bodies.map((b, i) => ({ ...b, seq: i + 1, at }) as LedgerEntry);
  const ids = new LedgerMessageIds("s1");
  const now = entries.flatMap((e) => replayTexts(e.seq, JSON.stringify(e), ids));
  assert.deepEqual(now, sentBefore(entries));
});

test("a record with a member replay does not know is parsed, never cut", () => {
  const entry = { type: "update", update: chunk("a", "m1"), extra: { note: "}" }, seq: 1, at } as unknown as LedgerEntry;
  const [text] = replayTexts(1, JSON.stringify(entry), new LedgerMessageIds("s1"));
  assert.deepEqual(JSON.parse(text!), chunk("a", "m1"));
});
