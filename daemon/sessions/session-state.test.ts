/** SessionState over a real store in a temporary folder: the record's changes, and what reaches the store at a commit. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keys, Store } from "../store/store.js";
import { SessionState, storedConversation } from "./session-state.js";
import { newSessionRecord, type SessionRecord } from "./types.js";

async function fresh(t: { after(fn: () => Promise<void>): void }): Promise<{ store: Store; state: SessionState }> {
  const dir = mkdtempSync(join(tmpdir(), "rx-state-"));
  const store = await Store.open(join(dir, "db"));
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const record = newSessionRecord({
    id: "s1",
    cwd: "/work",
    additionalDirectories: [],
    createdAt: "2026-01-01T00:00:00.000Z",
    model: "deepseek/deepseek-v4-flash",
  });
  return { store, state: new SessionState(record, [], store, () => undefined) };
}

test("a turn's changes: running then idle stamps the activity, the first prompt names it, a round's usage adds up", async (t) => {
  const { store, state } = await fresh(t);
  state.appendHistory({ role: "system", content: "sys" });
  state.setRunning(true);
  assert.equal(state.record.status, "running");
  assert.notEqual(state.record.updatedAt, state.record.createdAt);
  assert.equal(state.nameFrom("\n  first line of the prompt\nmore"), "first line of the prompt");
  assert.equal(state.nameFrom("another"), undefined, "named once");
  const usage = { promptTokens: 100, completionTokens: 20, cacheHitTokens: 60, cacheMissTokens: 40, reasoningTokens: 5 };
  state.countRound(usage, { ledger: 1 });
  state.countRound(usage, { ledger: 2 });
  assert.deepEqual(state.record.usage, { rounds: 2, promptTokens: 200, completionTokens: 40, cacheHitTokens: 120, cacheMissTokens: 80, reasoningTokens: 10 });
  assert.deepEqual([state.record.costs, state.record.context], [{ ledger: 2 }, { promptTokens: 100, messages: 1 }]);
  state.addNote("plan on");
  assert.deepEqual([state.takeNotes(), state.takeNotes()], [["plan on"], []]);
  state.setRunning(false);
  await state.commit();
  const stored = await store.get<SessionRecord>(keys.session("s1"));
  assert.deepEqual([stored?.status, stored?.title, stored?.usage?.rounds, stored?.historyLength], ["idle", "first line of the prompt", 2, 1]);
});

test("a compaction replaces the history and notes itself; a goal is reported only in goal mode; window facts fill only what is missing", async (t) => {
  const { store, state } = await fresh(t);
  for (const content of ["sys", "a", "b", "c"]) state.appendHistory({ role: "user", content });
  state.replaceHistory(
    [
      { role: "system", content: "sys" },
      { role: "user", content: "summary" },
    ],
    {
      messages: 3,
      summarised: true,
      focus: "the parser",
      tokensBefore: 900,
      tokensAfter: 120,
    },
  );
  assert.deepEqual(
    [state.record.historyLength, state.record.context, state.record.compaction?.count, state.record.compaction?.focus],
    [2, { promptTokens: 120, messages: 2 }, 1, "the parser"],
  );
  await state.commit();
  const record = structuredClone(state.record) as SessionRecord;
  record.historyLength = 0;
  assert.deepEqual(
    (await storedConversation(store, record)).map((m) => m.content),
    ["sys", "summary"],
    "the old keys past the new end are gone",
  );

  assert.equal(state.reportGoal({ summary: "done" }), false, "no goal outside goal mode");
  state.setControls({ mode: "goal" });
  state.setGoal({ text: "ship", status: "active", turns: 0, startedAt: "now" });
  assert.equal(state.reportGoal({ summary: "shipped", status: "complete" }), true);
  assert.deepEqual(state.record.goal, { text: "ship", status: "complete", turns: 0, startedAt: "now", summary: "shipped" });

  state.fillWindowFacts({ environment: { PATH: "/a" }, umask: undefined });
  state.fillWindowFacts({ environment: { PATH: "/b" }, umask: 0o027 });
  state.fillWindowFacts({ environment: { PATH: "/c" }, umask: 0o077 });
  assert.deepEqual([state.record.environment, state.record.umask], [{ PATH: "/a" }, 0o027]);
});
