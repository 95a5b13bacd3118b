/**
 * Session retention (issue 23): `reasonix sessions prune` and the `retention` config key remove the
 * sessions they name, as session/delete does (record, ledger, history, list index), and never one a
 * window is attached to. Sessions are aged by rewriting their `updatedAt` through the store API while
 * no daemon runs, the one way a test can have a 40-day-old session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { keys, Store } from "../../daemon/store/store.js";
import { indexKeys, reindexOps } from "../../daemon/records/list-index.js";
import type { SessionRecord } from "../../daemon/sessions/types.js";
import { BIN, makeHome, stopDaemon, type Agent } from "../support/harness.js";
import { daemonStatus, world, within } from "./fixture.js";

const run = promisify(execFile);
const DAY_MS = 86_400_000;

/** `reasonix sessions …` against the home's daemon, asynchronously (an in-process daemon must answer). */
async function sessionsCli(home: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, "sessions", ...args], { env: { ...process.env, REASONIX_HOME: home } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Moves the sessions' last activity `days` into the past, index included. No daemon may hold the store. */
async function age(home: string, ids: string[], days: number): Promise<void> {
  const store = await Store.open(join(home, "db"));
  try {
    for (const id of ids) {
      const record = (await store.get<SessionRecord>(keys.session(id)))!;
      const aged: SessionRecord = { ...record, updatedAt: new Date(Date.now() - days * DAY_MS).toISOString() };
      await store.batch([{ type: "put", key: keys.session(id), value: aged }, ...reindexOps(indexKeys(record), aged).ops], true);
    }
  } finally {
    await store.close();
  }
}

/** Every key the store holds for a session: record, ledger, history, list index entries. */
async function keysOf(home: string, ids: string[]): Promise<Map<string, string[]>> {
  const store = await Store.open(join(home, "db"));
  try {
    const found = new Map<string, string[]>();
    const index = [...(await store.keysOf("list!")), ...(await store.keysOf("listcwd!"))];
    for (const id of ids) {
      found.set(id, [
        ...(await store.keysOf(keys.session(id))),
        ...(await store.keysOf(keys.eventPrefix(id))),
        ...(await store.keysOf(keys.historyPrefix(id))),
        ...index.filter((k) => k.endsWith(`!${id}`)),
      ]);
    }
    return found;
  } finally {
    await store.close();
  }
}

/** Polls `check` until it holds; fails naming `what` after 10 s. */
function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  return within(
    10_000,
    what,
    (async () => {
      while (!(await check())) await new Promise((r) => setTimeout(r, 50));
    })(),
  );
}

async function prompted(agent: Agent, cwd: string, text: string): Promise<string> {
  const { sessionId } = await agent.newSession(cwd);
  assert.equal((await agent.prompt(sessionId, text)).stopReason, "end_turn");
  return sessionId;
}

async function listed(agent: Agent, cwd: string): Promise<string[]> {
  return (await agent.rpc.request("session/list", { cwd })).sessions.map((s: { sessionId: string }) => s.sessionId);
}

async function loadError(agent: Agent, sessionId: string, cwd: string): Promise<number | undefined> {
  const answer = await agent.rawRequest({ id: `load-${sessionId}`, method: "session/load", params: { sessionId, cwd, mcpServers: [] } });
  return answer.error?.code;
}

test("`reasonix sessions prune --empty` and `--older-than` remove exactly the sessions they name", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const oldPrompted = await prompted(agent, workdir, "an old question");
  const oldInUse = await prompted(agent, workdir, "an old question still open");
  const recent = await prompted(agent, workdir, "a recent question");
  const emptyOld = (await agent.newSession(workdir)).sessionId;
  const emptyRecent = (await agent.newSession(workdir)).sessionId;
  await agent.closeStdin();
  await stopDaemon(home.dir);
  await age(home.dir, [oldPrompted, oldInUse, emptyOld], 40);
  const all = [oldPrompted, oldInUse, recent, emptyOld, emptyRecent];
  const before = await keysOf(home.dir, all);
  assert.ok(
    before.get(oldPrompted)!.some((k) => k.startsWith("event!")),
    "a prompted session has a ledger",
  );

  const next = spawn();
  const init = await next.initialize();
  // The method behind the command, as a client finds it; a prune that names nothing is refused.
  const method = init.agentCapabilities._meta["reasonix.io"].sessionsPrune.method;
  assert.equal(method, "_reasonix.io/sessions/prune");
  const unnamed = await next.rawRequest({ id: "prune-nothing", method, params: { dryRun: true } });
  assert.equal(unnamed.error.code, -32602);
  assert.match(unnamed.error.message, /olderThanSeconds: name the sessions to remove/);
  // A window on one of the old sessions: it is in use, so no prune touches it.
  await next.rpc.request("session/resume", { sessionId: oldInUse, cwd: workdir, mcpServers: [] });

  const dry = await sessionsCli(home.dir, "prune", "--empty", "--dry-run");
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^would remove 2 sessions:\n/);
  assert.ok(dry.stdout.includes(emptyOld) && dry.stdout.includes(emptyRecent), dry.stdout);
  assert.equal((await daemonStatus(home.dir)).sessions.stored, 5, "a dry run removes nothing");

  const empties = await sessionsCli(home.dir, "prune", "--empty");
  assert.equal(empties.code, 0, empties.stderr);
  assert.match(empties.stdout, /^removed 2 sessions:\n/);
  // Oldest first, marked as never prompted.
  const lines = empties.stdout.trim().split("\n").slice(1);
  assert.deepEqual(
    lines.map((l) => l.trim().split(/\s+/)[0]),
    [emptyOld, emptyRecent],
  );
  assert.ok(
    lines.every((l) => l.endsWith("(no prompt)")),
    empties.stdout,
  );
  assert.equal((await daemonStatus(home.dir)).sessions.stored, 3);

  const old = await sessionsCli(home.dir, "prune", "--older-than", "30d");
  assert.equal(old.code, 0, old.stderr);
  assert.match(old.stdout, new RegExp(`^removed 1 session:\\n  ${oldPrompted}  \\S+  ${workdir}  an old question\\n`));
  assert.match(old.stdout, new RegExp(`kept 1 session in use:\\n  ${oldInUse} .*\\(1 window is attached\\)\\n$`));

  assert.deepEqual((await listed(next, workdir)).sort(), [oldInUse, recent].sort());
  for (const gone of [oldPrompted, emptyOld, emptyRecent]) assert.equal(await loadError(next, gone, workdir), -32002, gone);
  assert.equal(await loadError(next, recent, workdir), undefined);
  assert.equal(
    (await sessionsCli(home.dir, "prune", "--older-than", "30d")).stdout,
    `no sessions to remove\nkept 1 session in use:\n${old.stdout.split("\n").at(-2)}\n`,
  );

  // Nothing of the pruned sessions is left in the store; the others keep everything.
  await next.closeStdin();
  await stopDaemon(home.dir);
  const after = await keysOf(home.dir, all);
  for (const gone of [oldPrompted, emptyOld, emptyRecent]) assert.deepEqual(after.get(gone), [], gone);
  for (const kept of [oldInUse, recent]) assert.ok(after.get(kept)!.length >= before.get(kept)!.length, kept);
});

test("`reasonix sessions prune` refuses unknown flags, bad durations and no filter with a usage error", async (t) => {
  const home = await makeHome();
  t.after(() => home.cleanup());
  for (const [args, named] of [
    [["--older-than", "30x"], /--older-than "30x": not a duration \(a whole number and s, m, h or d/],
    [["--older-than", "0d"], /--older-than "0d": not a duration/],
    [["--older-than"], /--older-than/],
    [["--empty", "--since", "3d"], /'--since'/],
    [["--empty", "extra"], /'extra'/],
    [[], /--older-than DURATION, --empty, or both/],
  ] as const) {
    const r = await sessionsCli(home.dir, "prune", ...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, named);
    assert.match(r.stderr, /usage: reasonix sessions prune/);
    assert.equal(r.stdout, "");
  }
  assert.throws(() => readFileSync(join(home.dir, "run", "daemon.json")), /ENOENT/, "a usage error starts no daemon");
});

test("the retention config key: applied at start, by age and to sessions never prompted", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const old = await prompted(agent, workdir, "old work");
  const fresh = await prompted(agent, workdir, "fresh work");
  const emptyOld = (await agent.newSession(workdir)).sessionId;
  const emptyFresh = (await agent.newSession(workdir)).sessionId;
  await agent.closeStdin();
  await stopDaemon(home.dir);
  await age(home.dir, [old], 100);
  await age(home.dir, [emptyOld], 2);
  writeFileSync(join(home.dir, "config.json"), JSON.stringify({ retention: { olderThan: "90d", empty: "1d" } }));

  const next = spawn();
  await next.initialize();
  // The first sweep runs as the daemon starts serving; nothing here loads a session before it is done.
  await until("the start sweep", async () => (await daemonStatus(home.dir)).sessions.stored === 2);
  assert.deepEqual(await listed(next, workdir), [fresh]);
  assert.equal(await loadError(next, old, workdir), -32002);
  assert.equal(await loadError(next, emptyOld, workdir), -32002);
  assert.equal(await loadError(next, emptyFresh, workdir), undefined);
  // The log says what went, by which rule (written asynchronously: read until it shows).
  for (const line of [
    new RegExp(`"sessionId":"${old}".*"rule":"olderThan","limitSeconds":7776000.*retention removed a session`),
    new RegExp(`"sessionId":"${emptyOld}".*"rule":"empty","limitSeconds":86400.*retention removed a session`),
  ]) {
    await until(`log line ${line}`, () => line.test(readFileSync(join(home.dir, "logs", "daemon.log"), "utf8")));
  }
});

test("the retention config key applies periodically and leaves a session with a window alone", async (t) => {
  const { agent, workdir, spawn } = await world(t, {
    prepare: (dir) => writeFileSync(join(dir, "config.json"), JSON.stringify({ retention: { olderThan: "2s" } })),
  });
  await agent.initialize();
  // Both turns end now; the one with a window ends first, so it is the older of the two.
  const watched = await prompted(agent, workdir, "keep this open");
  const other = spawn();
  await other.initialize();
  const left = await prompted(other, workdir, "done with this");
  await other.closeStdin();

  await until("the left session's removal", async () => !(await listed(agent, workdir)).includes(left));
  // The sweep that removed it found the watched one older still, and kept it: a window is attached.
  assert.deepEqual(await listed(agent, workdir), [watched]);
  assert.equal((await agent.prompt(watched, "still here?")).stopReason, "end_turn");
  assert.equal(await loadError(agent, left, workdir), -32002);
});
