import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keys, Store } from "../store/store.js";
import { EditorSilence } from "../tools/editor-silence.js";
import { joinableText } from "./ledger-join.js";
import { replayLedger } from "./replay.js";
import { SessionState } from "./session-state.js";
import type { ClientPort, LedgerEntry, SessionRecord, SessionUpdate } from "./types.js";

const chunk = (kind: "agent_message_chunk" | "agent_thought_chunk", text: string): SessionUpdate => ({ sessionUpdate: kind, content: { type: "text", text } });

/** A window that keeps what it is sent, in order. */
function window(): ClientPort & { sent: SessionUpdate[] } {
  const sent: SessionUpdate[] = [];
  return {
    sent,
    connectionId: "w1",
    silence: new EditorSilence(() => undefined),
    capabilities: {
      readTextFile: false,
      writeTextFile: false,
      terminal: false,
      extensionSurface: false,
      elicitationForm: false,
      elicitationUrl: false,
      mcpInteraction: false,
      vendor: false,
    },
    lastActive: 0,
    closed: false,
    env: {},
    sendUpdate: (_id, update) => sent.push(update),
    notify: () => undefined,
    backlog: () => 0,
    request: () => Promise.reject(new Error("no requests here")),
  };
}

async function setup(t: { after(fn: () => Promise<void> | void): void }) {
  const dir = mkdtempSync(join(tmpdir(), "rx-join-"));
  const store = await Store.open(join(dir, "db"));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const record = { id: "s1", lastSeq: 0 } as SessionRecord;
  const state = new SessionState(record, [], store, (err) => assert.fail(`no write fails here: ${String(err)}`));
  return { store, state, record };
}

test("text chunks of one kind streamed between two flushes share a record; replay sends each chunk as it was sent, in order", async (t) => {
  const { store, state, record } = await setup(t);
  const sent: SessionUpdate[] = [
    { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } },
    chunk("agent_thought_chunk", "let me "),
    chunk("agent_thought_chunk", "think"),
    chunk("agent_message_chunk", "Hello"),
    chunk("agent_message_chunk", ", "),
    chunk("agent_message_chunk", "world"),
  ];
  for (const u of sent) state.appendLedger({ type: "update", update: u });
  state.appendLedger({ type: "turn_end", turnId: "t1", stopReason: "end_turn" });
  await state.flush();

  const stored = await store.range<LedgerEntry>(keys.eventPrefix("s1"));
  assert.deepEqual(
    stored.map(({ value }) => value.seq),
    [1, 2, 3, 4],
    "the user chunk, the thought, the message and the turn's end: four records numbered without a hole",
  );
  assert.equal(record.lastSeq, 4);
  assert.deepEqual(stored[1]!.value, { ...stored[1]!.value, type: "update", update: sent[1], more: ["think"] });
  assert.deepEqual(stored[2]!.value, { ...stored[2]!.value, type: "update", update: sent[3], more: [", ", "world"] });

  const w = window();
  await replayLedger(state, store, w);
  assert.deepEqual(w.sent, sent);
});

test("a chunk after a flush opens a new record (a record handed to the store never changes); so does any other entry between two chunks", async (t) => {
  const { store, state } = await setup(t);
  state.appendLedger({ type: "update", update: chunk("agent_message_chunk", "a") });
  await state.flush();
  state.appendLedger({ type: "update", update: chunk("agent_message_chunk", "b") });
  state.appendLedger({ type: "permission", toolCallId: "c1", outcome: "allow" });
  state.appendLedger({ type: "update", update: chunk("agent_message_chunk", "c") });
  state.appendLedger({ type: "update", update: chunk("agent_message_chunk", "d") });
  await state.flush();
  const stored = (await store.range<LedgerEntry>(keys.eventPrefix("s1"))).map(({ value }) => value);
  assert.deepEqual(
    stored.map((v) => (v.type === "update" ? [v.seq, (v.update as { content: { text: string } }).content.text, v.more] : [v.seq, v.type])),
    [
      [1, "a", undefined],
      [2, "b", undefined],
      [3, "permission"],
      [4, "c", ["d"]],
    ],
  );
  const w = window();
  await replayLedger(state, store, w);
  assert.deepEqual(
    w.sent.map((u) => (u as { content: { text: string } }).content.text),
    ["a", "b", "c", "d"],
  );
});

test("a chunk carrying more than its text (an id, _meta, an image) keeps a record of its own", async (t) => {
  assert.equal(joinableText(chunk("agent_message_chunk", "x")), "x");
  assert.equal(joinableText({ ...chunk("agent_message_chunk", "x"), _meta: { a: 1 } }), undefined);
  assert.equal(joinableText({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x", annotations: { priority: 1 } } }), undefined);
  assert.equal(joinableText({ sessionUpdate: "agent_message_chunk", content: { type: "image", data: "AA==", mimeType: "image/png" } }), undefined);
  assert.equal(joinableText({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "x" } }), undefined);

  const { store, state } = await setup(t);
  const tagged = { ...chunk("agent_message_chunk", "b"), _meta: { tag: 1 } };
  for (const u of [chunk("agent_message_chunk", "a"), tagged, chunk("agent_message_chunk", "c")]) state.appendLedger({ type: "update", update: u });
  await state.flush();
  const stored = await store.range<LedgerEntry>(keys.eventPrefix("s1"));
  assert.equal(stored.length, 3);
  const w = window();
  await replayLedger(state, store, w);
  assert.deepEqual(w.sent, [chunk("agent_message_chunk", "a"), tagged, chunk("agent_message_chunk", "c")]);
});

test("a long answer streamed at once spans several records of at most 64 KiB of text each", async (t) => {
  const { store, state } = await setup(t);
  const piece = "x".repeat(1000);
  for (let i = 0; i < 200; i++) state.appendLedger({ type: "update", update: chunk("agent_message_chunk", piece) });
  await state.flush();
  const stored = await store.range<LedgerEntry>(keys.eventPrefix("s1"));
  assert.equal(stored.length, Math.ceil(200 / 65), "65 pieces of 1,000 characters fit in 64 KiB");
  const w = window();
  await replayLedger(state, store, w);
  assert.equal(w.sent.length, 200);
});
