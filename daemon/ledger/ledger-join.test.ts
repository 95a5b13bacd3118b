import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keys, Store } from "../store/store.js";
import { EditorSilence } from "../tools/editor-silence.js";
import { joinableText } from "./ledger-join.js";
import { replayLedger } from "./replay.js";
import { SessionState } from "../sessions/session-state.js";
import type { ClientPort, LedgerEntry, SessionRecord, SessionUpdate } from "../sessions/types.js";

const chunk = (kind: "agent_message_chunk" | "agent_thought_chunk", text: string, messageId: string = kind): SessionUpdate => ({
  sessionUpdate: kind,
  content: { type: "text", text },
  messageId,
});

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
    sendEncodedUpdates: (_id, updates) => sent.push(...updates.map((u) => JSON.parse(u) as SessionUpdate)),
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
    { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" }, messageId: "u1" },
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

test("chunks of two messages keep records of their own; a chunk without an id is a message of its own, live and replayed", async (t) => {
  const { store, state } = await setup(t);
  const bare: SessionUpdate = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "[notice] x" } };
  const sent = [chunk("agent_message_chunk", "a", "m1"), chunk("agent_message_chunk", "b", "m2"), chunk("agent_message_chunk", "c", "m2"), bare];
  for (const u of sent) state.appendLedger({ type: "update", update: u });
  await state.flush();
  const stored = (await store.range<LedgerEntry>(keys.eventPrefix("s1"))).map(({ value }) => value);
  assert.equal(stored.length, 3, "m1, m2 (joined) and the notice");
  assert.match(String((bare as { messageId?: unknown }).messageId), /^[0-9a-f-]{36}$/, "the notice was given an id before it was sent");
  const w = window();
  await replayLedger(state, store, w);
  assert.deepEqual(w.sent, sent);
});

test("a ledger recorded before message ids replays runs of same-kind chunks as one message each, under the same ids every time", async (t) => {
  const { store, state, record } = await setup(t);
  const old = (seq: number, kind: string, text: string, more?: string[]) => ({
    key: keys.event("s1", seq),
    type: "put" as const,
    value: { type: "update", update: { sessionUpdate: kind, content: { type: "text", text } }, ...(more ? { more } : {}), seq, at: "2025-01-01T00:00:00.000Z" },
  });
  await store.batch(
    [
      old(1, "user_message_chunk", "q"),
      old(2, "agent_thought_chunk", "hm"),
      old(3, "agent_message_chunk", "a", ["b"]),
      old(4, "agent_message_chunk", "c"),
      { key: keys.event("s1", 5), type: "put", value: { type: "turn_end", turnId: "t", seq: 5, at: "2025-01-01T00:00:00.000Z" } },
      old(6, "agent_message_chunk", "d"),
    ],
    true,
  );
  record.lastSeq = 6;
  const first = window();
  await replayLedger(state, store, first);
  const second = window();
  await replayLedger(state, store, second);
  const ids = first.sent.map((u) => (u as { messageId?: string }).messageId);
  assert.deepEqual(
    second.sent.map((u) => (u as { messageId?: string }).messageId),
    ids,
  );
  assert.ok(ids.every((id) => typeof id === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)));
  const [q, hm, a, b, c, d] = ids;
  assert.equal(new Set([q, hm, a, d]).size, 4);
  assert.equal(b, a);
  assert.equal(c, a, "consecutive records of one kind are one message");
});

test("conversation updates note the model history's length; reports about it do not", async (t) => {
  const { store, state } = await setup(t);
  state.appendHistory({ role: "system", content: "s" });
  state.appendLedger({ type: "update", update: chunk("agent_message_chunk", "a") });
  state.appendHistory({ role: "assistant", content: "a" });
  state.appendLedger({ type: "update", update: { sessionUpdate: "usage_update", used: 1, size: 2 } });
  state.appendLedger({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "c1", title: "t" } });
  await state.flush();
  const stored = (await store.range<LedgerEntry>(keys.eventPrefix("s1"))).map(({ value }) => (value.type === "update" ? value.historyAt : "-"));
  assert.deepEqual(stored, [1, undefined, 2]);
});

test("a chunk carrying more than its text and message id (_meta, annotations, an image) keeps a record of its own", async (t) => {
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

const toolCall = (n: number): SessionUpdate => ({ sessionUpdate: "tool_call", toolCallId: `c${n}`, title: `call ${n}`, kind: "read", status: "pending" });

test("a ledger of many pages (3,000 records) replays whole and in order, each record once", async (t) => {
  const { store, state } = await setup(t);
  for (let n = 1; n <= 3000; n++) {
    state.appendLedger({ type: "update", update: toolCall(n) });
    if (n % 500 === 0) await state.flush();
  }
  const w = window();
  await replayLedger(state, store, w);
  assert.deepEqual(
    w.sent.map((u) => (u as { toolCallId: string }).toolCallId),
    Array.from({ length: 3000 }, (_, i) => `c${i + 1}`),
  );
});

test("records a turn writes while a long replay goes out are replayed too, after the rest, in order", async (t) => {
  const { store, state } = await setup(t);
  for (let n = 1; n <= 2000; n++) state.appendLedger({ type: "update", update: toolCall(n) });
  await state.flush();
  const w = window();
  // The window says it is behind now and then: each time, a turn appends more while the replay waits.
  let asked = 0;
  let written = 2000;
  w.backlog = () => {
    if (++asked % 3 !== 0 || written >= 2300) return 0;
    for (let i = 0; i < 50; i++) state.appendLedger({ type: "update", update: toolCall(++written) });
    return 2 * 1024 * 1024;
  };
  await replayLedger(state, store, w);
  assert.ok(written > 2000, "records were written during the replay");
  assert.deepEqual(
    w.sent.map((u) => (u as { toolCallId: string }).toolCallId),
    Array.from({ length: written }, (_, i) => `c${i + 1}`),
  );
});

test("an update recorded while the replay's iterator closes reaches the loading window live, once, after the history", async (t) => {
  const { store, state } = await setup(t);
  for (let i = 1; i <= 3; i++) state.appendLedger({ type: "update", update: toolCall(i) });
  await state.flush();
  const w = window();
  let attached = false;
  // What Session.emit does: record the update, then send it to the windows attached at that moment.
  const emit = (update: SessionUpdate): void => {
    state.appendLedger({ type: "update", update });
    if (attached) w.sendUpdate("s1", update);
  };
  // The turn streams on while the store's thread closes the iterator: the moment the window used to
  // be attached only after (seen once under load: a turn's last chunk never reached the loading window).
  const source = {
    id: state.id,
    record: state.record,
    flush: () => state.flush(),
    ledgerCursor: (from: number, limit: number, bytes: number) => {
      const cursor = state.ledgerCursor(from, limit, bytes);
      return {
        next: () => cursor.next(),
        close: async () => {
          emit(toolCall(4));
          await cursor.close();
        },
      };
    },
  };
  await replayLedger(source, store, w, () => {
    attached = true;
  });
  assert.deepEqual(
    w.sent.map((u) => (u as { toolCallId: string }).toolCallId),
    ["c1", "c2", "c3", "c4"],
  );
});
