/**
 * Sessions through their manager over a real store in a temporary folder (test/support/sessions.ts):
 * the verbs a window's side uses, and what each leaves in the record and the store.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { testSessions, TestWindow, type TestSessions } from "../../test/support/sessions.js";
import { keys } from "../store/store.js";
import { SessionManager } from "./manager.js";
import type { LedgerEntry, SessionRecord } from "./types.js";

const text = (t: string) => [{ type: "text" as const, text: t }];

/** A new session in `cwd` (the test's folder unless given), opened by `window` as session/new does. */
async function newSession(s: TestSessions, window: TestWindow, cwd = s.dir) {
  const session = await s.manager.create({ cwd, additionalDirectories: [], model: s.config.defaultModel, env: window.env });
  await session.open(window, { mcpServers: [], created: true });
  return session;
}

/**
 * A manager over a fresh store (closed after the test), window "a" and a session it created, in
 * the store's folder or, with `workFolder`, in a folder of its own beside the store.
 */
async function oneSession(t: TestContext, opts: { workFolder?: boolean } = {}) {
  const s = await testSessions();
  t.after(() => s.close());
  const cwd = opts.workFolder ? join(s.dir, "work") : s.dir;
  if (opts.workFolder) mkdirSync(cwd);
  const a = new TestWindow("a");
  return { s, a, session: await newSession(s, a, cwd) };
}

/** Waits until `done()` holds (the inbox driver starts follow-ups on its own), at most 5 s. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(done(), "the condition did not come to hold within 5 s");
}

test("a prompt is one turn: the title, usage and status land in the record, and a load from the store brings them back", async (t) => {
  const { s, a, session } = await oneSession(t, { workFolder: true });
  assert.equal(await session.prompt(text("fix the parser\nsecond line"), a), "end_turn");
  assert.equal(a.agentText(), "done.");
  assert.deepEqual([session.record.title, session.record.status, session.record.usage?.rounds], ["fix the parser", "idle", 1]);
  assert.equal(s.model.requests[0]!.messages.at(-1)!.content, "fix the parser\nsecond line");

  await s.manager.close(session.id, a);
  assert.equal(s.manager.liveSessions().length, 0, "the last window out stops it");
  const again = await s.manager.get(session.id);
  assert.notEqual(again, session);
  assert.deepEqual([again.record.title, again.record.status, again.record.usage?.rounds, again.record.historyLength], ["fix the parser", "idle", 1, 3]);
  const listed = await s.manager.list(undefined, undefined);
  assert.deepEqual(
    listed.sessions.map((e) => e.title),
    ["fix the parser"],
  );
});

test("a window that loads gets the ledger, then the start notices and the slash menu; its umask fills only what the record lacks", async (t) => {
  const { a, session } = await oneSession(t, { workFolder: true });
  assert.equal(a.updates.length, 0, "nothing before the answer of session/new");
  session.greet(a);
  assert.match(a.agentText(), /\[notice\] .*not probed in unit tests/, "the sandbox's absence is a start notice");
  assert.equal(a.updates.at(-1)?.sessionUpdate, "available_commands_update");
  await session.prompt(text("hello"), a);
  assert.equal(session.record.umask, undefined, "a window that did not say leaves the umask unset");

  const b = new TestWindow("b", { PATH: "/other" }, 0o027);
  await session.open(b, { mcpServers: [], replay: true });
  session.greet(b);
  const kinds = b.updates.map((u) => u.sessionUpdate);
  assert.deepEqual(kinds.slice(0, 2), ["agent_message_chunk", "user_message_chunk"], "the replay: the notice, then the prompt");
  assert.equal(kinds.at(-1), "available_commands_update", "the slash menu is last");
  assert.equal(session.record.umask, 0o027, "the loading window fills the missing umask");
  assert.deepEqual(session.record.environment, { PATH: "/usr/bin" }, "but not the environment, which the session has");

  const c = new TestWindow("c", {}, 0o077);
  await session.open(c, { mcpServers: [] });
  assert.equal(session.record.umask, 0o027, "a later window changes nothing");
  assert.equal(session.activity().windows, 3);
});

test("the inbox verbs: a follow-up waits while paused and runs once resumed; a steer while idle waits in line", async (t) => {
  const { s, session } = await oneSession(t);
  assert.equal(await session.setInboxPaused(true), true);
  const queued = await session.enqueue("first follow-up", "followup");
  assert.deepEqual([queued.disposition, queued.position, queued.paused], ["queued_followup", 0, true]);
  const steer = await session.steer(text("a steer with no turn running"));
  assert.equal(steer.disposition, "queued_followup");
  assert.equal(session.inboxItem(steer.itemId).item.intent, "steer");
  await session.moveInboxItem(steer.itemId, 0);
  await session.updateInboxItem(steer.itemId, "the steer, edited");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(s.model.requests.length, 0, "nothing runs while paused");

  assert.equal(await session.setInboxPaused(false), false);
  await until(() => s.model.requests.length === 2 && session.activity().queued === 0 && !session.busy);
  assert.deepEqual(
    s.model.requests.map((r) => r.messages.at(-1)!.content),
    ["the steer, edited", "first follow-up"],
    "resumed, the inbox runs in its order",
  );
  assert.throws(() => session.inboxItem(queued.item.id), /not found|no inbox item|unknown/i);
});

test("a control changed from one window is announced to the others and persists; an unknown value is refused", async (t) => {
  const { s, a, session } = await oneSession(t);
  const b = new TestWindow("b");
  await session.open(b, { mcpServers: [] });
  await session.setControl("mode", "plan", a);
  assert.deepEqual(
    a.updates.map((u) => u.sessionUpdate),
    ["current_mode_update"],
    "the origin is not told what it set",
  );
  assert.deepEqual(
    b.updates.map((u) => u.sessionUpdate),
    ["current_mode_update", "config_option_update"],
  );
  assert.equal(session.controls().modes.currentModeId, "plan");
  await assert.rejects(session.setControl("effort", "extreme", a), /unknown effort "extreme"/);
  await s.manager.close(session.id, a);
  await s.manager.close(session.id, b);
  const again = await s.manager.get(session.id);
  assert.deepEqual([again.record.mode, again.record.notes?.length], ["plan", 1], "the mode and the note for the model were saved");
});

test("a window that drops: an unprompted session leaves memory; a prompted one stays, and cancel by id reaches it", async (t) => {
  const { s, a, session: empty } = await oneSession(t);
  const used = await newSession(s, a);
  await used.prompt(text("hello"), a);
  s.manager.detachEverywhere(a);
  assert.deepEqual(
    s.manager.liveSessions().map((x) => x.id),
    [used.id],
  );
  assert.equal(used.activity().windows, 0);
  s.manager.cancel("no-such-session");
  s.manager.cancel(used.id);
  assert.equal((await s.manager.get(empty.id)).record.title, undefined, "the unloaded one still loads by id");
});

test("turns a dead daemon left running: nothing at start reads the records; the paced pass marks each once, a load before it marks its own", async (t) => {
  const s = await testSessions();
  let next: SessionManager | undefined;
  t.after(async () => {
    await next?.shutdown();
    await s.close();
  });
  const cwd = join(s.dir, "work");
  mkdirSync(cwd);
  const a = new TestWindow("a");
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const session = await s.manager.create({ cwd, additionalDirectories: [], model: s.config.defaultModel, env: a.env });
    await session.open(a, { mcpServers: [], created: true });
    await session.prompt(text(`question ${i}`), a);
    await s.manager.close(session.id, a);
    ids.push(session.id);
  }
  // What a daemon killed mid-turn leaves: records of sessions 1 and 3 still say running.
  for (const id of [ids[1]!, ids[3]!]) {
    const record = await s.store.get<SessionRecord>(keys.session(id));
    await s.store.batch([{ type: "put", key: keys.session(id), value: { ...record, status: "running" } }], true);
  }
  // The next daemon over the same store.
  await s.manager.shutdown();
  next = new SessionManager(s.store, s.deps, s.deps.log);
  await next.recover();
  assert.equal((await s.store.get<SessionRecord>(keys.session(ids[1]!)))?.status, "running", "start-up leaves them to the pass after it");

  const first = await next.get(ids[3]!); // a window came first
  assert.equal(first.record.status, "interrupted");
  let pauses = 0;
  const marked = await next.recoverInterrupted(async () => ++pauses > 0, 2);
  assert.equal(marked, 1, "the pass marks only the session nobody loaded");
  assert.equal(pauses, 2, "a pause after each full page of two");
  for (const [i, id] of ids.entries()) {
    const ledger = await s.store.range<LedgerEntry>(keys.eventPrefix(id));
    assert.equal(ledger.filter((e) => e.value.type === "interrupted").length, i === 1 || i === 3 ? 1 : 0, `session ${i}`);
    assert.notEqual((await s.store.get<SessionRecord>(keys.session(id)))?.status, "running");
  }
  assert.equal(await next.recoverInterrupted(async () => true), 0, "a second pass finds nothing");
});

test("a record the pass read as running while one of this daemon's turns ran brings nothing back once that session has left memory", async (t) => {
  const { s, a, session } = await oneSession(t);
  await session.prompt(text("a question"), a);
  await s.manager.close(session.id, a);
  // The page the pass read mid-turn: the record as it stood then.
  const record = await s.store.get<SessionRecord>(keys.session(session.id));
  await s.store.batch([{ type: "put", key: keys.session(session.id), value: { ...record, status: "running" } }], true);
  assert.equal(await s.manager.recoverInterrupted(async () => true), 0);
  assert.equal(s.manager.liveSessions().length, 0, "no session comes back that no window opened");
  assert.equal((await s.manager.get(session.id)).record.status, "interrupted", "a load still puts a stale running status right");
});
