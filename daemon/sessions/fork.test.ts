import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcError } from "../../shared/jsonrpc.js";
import { keys, Store } from "../store/store.js";
import { forkConversation, settleToolCalls } from "./fork.js";
import { LedgerMessageIds } from "../ledger/message-ids.js";
import type { ChatMessage, LedgerEntry, SessionRecord } from "./types.js";

const call = (id: string) => ({ id, type: "function" as const, function: { name: "read_file", arguments: "{}" } });

test("a history cut inside a round: calls the fork shows get a 'not finished' result, the others leave, and an answer left with nothing goes", () => {
  const history: ChatMessage[] = [
    { role: "system", content: "s" },
    { role: "user", content: "q" },
    { role: "assistant", content: "Reading.", reasoning_content: "r", tool_calls: [call("a"), call("b"), call("c")] },
    { role: "tool", tool_call_id: "a", content: "A" },
  ];
  const shown = new Map([
    ["a", "completed"],
    ["b", "in_progress"],
  ]);
  const { history: out, closed } = settleToolCalls(history, shown);
  assert.deepEqual(closed, ["b"]);
  assert.deepEqual(
    out.map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.map((c) => c.id) ?? m.content]),
    [
      ["system", "s"],
      ["user", "q"],
      ["assistant", ["a", "b"]],
      ["tool", "a"],
      ["tool", "b"],
    ],
  );
  assert.equal(out[2]!.reasoning_content, "r", "a round whose calls stay keeps its reasoning (DeepSeek needs it)");

  const silent = settleToolCalls(
    [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [call("x")] },
    ],
    new Map(),
  );
  assert.deepEqual(silent, { history: [{ role: "user", content: "q" }], closed: [] });
  const spoken = settleToolCalls([{ role: "assistant", content: "Let me look.", reasoning_content: "r", tool_calls: [call("x")] }], new Map());
  assert.deepEqual(spoken.history, [{ role: "assistant", content: "Let me look." }]);
});

test("a ledger written before message ids forks whole with the ids its replay shows; a fork at one of its messages is refused, naming the field", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "rx-fork-"));
  const store = await Store.open(join(dir, "db"));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const at = "2025-01-01T00:00:00.000Z";
  const chunk = (seq: number, kind: string, text: string) => ({
    type: "put" as const,
    key: keys.event("old", seq),
    value: { type: "update", update: { sessionUpdate: kind, content: { type: "text", text } }, seq, at },
  });
  await store.batch(
    [
      chunk(1, "user_message_chunk", "q"),
      chunk(2, "agent_message_chunk", "a"),
      chunk(3, "agent_message_chunk", "b"),
      { type: "put", key: keys.event("old", 4), value: { type: "turn_end", turnId: "t", stopReason: "end_turn", seq: 4, at } },
      chunk(5, "user_message_chunk", "q2"),
      chunk(6, "agent_message_chunk", "c"),
      { type: "put", key: keys.history("old", 0), value: { role: "system", content: "s" } },
      { type: "put", key: keys.history("old", 1), value: { role: "user", content: "q" } },
      { type: "put", key: keys.history("old", 2), value: { role: "assistant", content: "ab" } },
      { type: "put", key: keys.history("old", 3), value: { role: "user", content: "q2" } },
      { type: "put", key: keys.history("old", 4), value: { role: "assistant", content: "c" } },
    ],
    true,
  );
  const parent = { id: "old", lastSeq: 6, historyLength: 5 } as SessionRecord;
  const ids = new LedgerMessageIds("old");
  const parentIds = (await store.range<LedgerEntry>(keys.eventPrefix("old"))).map(({ value }) =>
    ids.next(value.seq, value.type === "update" ? value.update : undefined),
  );

  const whole = await forkConversation(store, parent, "new", undefined);
  assert.equal(whole.lastSeq, 6);
  assert.equal(whole.history.length, 5);
  const copied = (await store.range<LedgerEntry>(keys.eventPrefix("new"))).map(({ value }) =>
    value.type === "update" ? (value.update as { messageId?: string }).messageId : undefined,
  );
  assert.deepEqual(copied, parentIds, "the fork stores the ids the parent's replay derives");
  assert.equal(copied[1], copied[2]);

  await assert.rejects(forkConversation(store, parent, "new2", parentIds[1]!), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, -32602);
    assert.match(err.message, /_meta\["reasonix\.io"\]\.messageId: .*older version/);
    return true;
  });
  // The last message has nothing after it to place the cut by: it forks like the whole session.
  const last = await forkConversation(store, parent, "new3", parentIds[5]!);
  assert.equal(last.history.length, 5);
});
