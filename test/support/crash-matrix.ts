/**
 * The crash-consistency matrix: named points at which the daemon process is killed with SIGKILL,
 * each reached deterministically (a model reply held open, a command blocked on a FIFO, a
 * permission question nobody answers, an inbox operation just acknowledged, a flood of chunks at a
 * counted position), never by waiting a while. After every kill the store is opened directly and
 * scanned (numbering without holes, every value's checksum good), a new shim starts a new daemon,
 * and every session of the run is loaded again: each acknowledged prompt, steer and inbox item is
 * there exactly once, no tool call is reported twice, no write ran again, the model was not asked
 * again, and each interrupted turn is marked once.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, constants, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { keys, Store, StoreLockedError } from "../../daemon/store/store.js";
import { scanStore } from "../../daemon/store/integrity.js";
import { isAlive, waitForDaemonPid, waitForPidExit, type Agent, type AgentProcess } from "./harness.js";
import type { ScriptedModel } from "./scripted-model.js";

export const INBOX = "_reasonix.io/session/inbox";

/** What the run knows about one session: what must be in its ledger after any crash. */
export interface SessionRef {
  id: string;
  /** prompts whose turn visibly started (acknowledged): each must be replayed exactly once */
  acknowledged: string[];
  /** every prompt text ever sent to it: nothing else may appear as a user message */
  sent: Set<string>;
  /** turns a kill cut short: one "[interrupted]" note each */
  interrupted: number;
  /** inbox items by id, in order, with their text; undefined when the test does not track the inbox */
  inbox?: Array<{ id: string; text: string }>;
  paused?: boolean;
}

export interface Run {
  model: ScriptedModel;
  workdir: string;
  home: string;
  /** a window on the current daemon: arms the next point */
  window: AgentProcess;
  sessions: SessionRef[];
  /** the seeded random source */
  rand: () => number;
  /** times the write command of the tool point started (a marker line each) */
  toolRuns: number;
  kills: number;
  checks: number;
}

export interface CrashPoint {
  name: string;
  /** must run after these (it needs what they leave behind) */
  after?: string[];
  /** brings the daemon to the point; resolves when the kill may happen */
  arm(run: Run): Promise<void>;
  /** point-specific checks after the restart (the common ones run for every point) */
  verify?(run: Run, next: Agent): Promise<void>;
  /** point-specific checks of the dead daemon's store, beside the common ones */
  stored?(run: Run, store: Store): Promise<void>;
  /** after every check: new work on what the point left (it may ask the model) */
  resume?(run: Run, next: Agent): Promise<void>;
}

/** A small seeded generator (mulberry32): the same seed, the same order and choices. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The points in a seeded order that keeps each after what it needs. */
export function orderPoints(points: CrashPoint[], rand: () => number): CrashPoint[] {
  const left = [...points];
  const out: CrashPoint[] = [];
  while (left.length > 0) {
    const ready = left.filter((p) => (p.after ?? []).every((a) => out.some((o) => o.name === a) || !points.some((q) => q.name === a)));
    const pick = ready[Math.floor(rand() * ready.length)]!;
    out.push(pick);
    left.splice(left.indexOf(pick), 1);
  }
  return out;
}

const never = new Promise<never>(() => undefined);

export async function newSession(run: Run, extra: Partial<SessionRef> = {}): Promise<SessionRef> {
  const { sessionId } = await run.window.newSession(run.workdir);
  const ref: SessionRef = { id: sessionId, acknowledged: [], sent: new Set(), interrupted: 0, ...extra };
  run.sessions.push(ref);
  return ref;
}

/** Starts a turn whose reply shows `first` and then holds until the daemon dies. */
export async function heldTurn(run: Run, s: SessionRef, text: string, first = `held ${text} `): Promise<void> {
  run.model.enqueue({ content: [first, "never sent"], holdUntil: never });
  const from = run.window.updates.length;
  s.sent.add(text);
  run.window.prompt(s.id, text).catch(() => undefined);
  await run.window.waitForUpdate((u) => u.sessionId === s.id && u.update.content?.text === first, 15_000, from);
  s.acknowledged.push(text);
  s.interrupted++;
}

export async function inboxCall(run: Run, method: string, params: object): Promise<any> {
  const answer = await run.window.rawRequest({ id: `${method}-${Math.floor(run.rand() * 1e9)}`, method: `${INBOX}/${method}`, params }, 15_000);
  assert.equal(answer.error, undefined, `${method}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/**
 * SIGKILL of the daemon, then of every window on it; resolves once the processes are gone. The
 * windows are frozen first: a shim that saw its daemon die could start the next one before the
 * store is checked.
 */
export async function killDaemon(run: Run, windows: AgentProcess[]): Promise<void> {
  const pid = await waitForDaemonPid(run.home);
  for (const w of windows) if (w.child.pid !== undefined) process.kill(w.child.pid, "SIGSTOP");
  process.kill(pid, "SIGKILL");
  assert.ok(await waitForPidExit(pid, 10_000), "the daemon died");
  for (const w of windows) await w.kill("SIGKILL");
  run.kills++;
}

/** Opens the dead daemon's store in this process: no holes, no damaged value, records consistent. */
export async function checkStore(run: Run, point?: Pick<CrashPoint, "stored">): Promise<void> {
  const store = await openWhenFree(join(run.home, "db"));
  try {
    await scanStore(store);
    await point?.stored?.(run, store);
    for (const s of run.sessions) {
      const events = await store.range<unknown>(keys.eventPrefix(s.id));
      const stored = await store.keysOf(keys.eventPrefix(s.id));
      assert.equal(events.length, stored.length, `${s.id}: every ledger entry decodes (no torn entry)`);
      const seqs = stored.map((k) => Number(k.slice(k.lastIndexOf("!") + 1)));
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        `${s.id}: ledger numbered 1..${seqs.length} without a hole`,
      );
      run.checks += 2;
    }
    assert.deepEqual(store.health().damage, [], "the store scan found no damage");
    run.checks++;
  } finally {
    await store.close();
  }
}

/** A process being torn down counts as gone but may hold its lock a moment longer. */
async function openWhenFree(dir: string): Promise<Store> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await Store.open(dir);
    } catch (err) {
      if (!(err instanceof StoreLockedError) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Loads a session in `w`; returns its replayed updates. */
export async function replay(w: Agent, s: SessionRef, cwd: string): Promise<any[]> {
  const from = w.messages.length;
  const answer = await w.rawRequest({ id: `load-${s.id}-${from}`, method: "session/load", params: { sessionId: s.id, cwd, mcpServers: [] } }, 20_000);
  assert.equal(answer.error, undefined, `load ${s.id}: ${JSON.stringify(answer.error)}`);
  const at = w.messages.indexOf(answer);
  return w.messages
    .slice(from, at)
    .filter((m) => m.method === "session/update" && m.params.sessionId === s.id)
    .map((m) => m.params.update);
}

/** The checks every point gets, over every session of the run. */
export async function checkSessions(run: Run, next: Agent, requestsBefore: number): Promise<void> {
  for (const s of run.sessions) {
    const updates = await replay(next, s, run.workdir);
    const users = updates.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text as string);
    for (const text of s.acknowledged) {
      assert.equal(users.filter((u) => u === text).length, 1, `${s.id}: acknowledged prompt "${text.slice(0, 40)}" replayed exactly once`);
    }
    for (const u of users) assert.ok(s.sent.has(u), `${s.id}: "${u.slice(0, 40)}" was sent by the test`);
    assert.equal(new Set(users).size, users.length, `${s.id}: no user message twice`);
    const calls = updates.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.toolCallId as string);
    assert.equal(new Set(calls).size, calls.length, `${s.id}: no tool call reported twice`);
    const ends = updates
      .filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"))
      .map((u) => u.toolCallId as string);
    assert.equal(new Set(ends).size, ends.length, `${s.id}: no tool call ends twice`);
    const text = updates
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content.text as string)
      .join("");
    assert.equal(text.split("[interrupted]").length - 1, s.interrupted, `${s.id}: one [interrupted] note per cut turn`);
    run.checks += 6;
    if (s.inbox) {
      const list = await next.rawRequest({ id: `list-${s.id}-${run.kills}`, method: `${INBOX}/list`, params: { sessionId: s.id } }, 15_000);
      const items = list.result.items as Array<{ itemId: string; state: string }>;
      assert.deepEqual(
        items.map((i) => i.itemId),
        s.inbox.map((i) => i.id),
        `${s.id}: the inbox holds every acknowledged item, in order`,
      );
      for (const item of s.inbox) {
        const got = await next.rawRequest({ id: `get-${item.id}-${run.kills}`, method: `${INBOX}/get`, params: { sessionId: s.id, itemId: item.id } }, 15_000);
        assert.equal(got.result.envelope.text, item.text, `${s.id}: item ${item.id} kept its acknowledged text`);
        assert.notEqual(got.result.meta.state, "running", "nothing runs on its own after a restart");
      }
      if (items.length > 0) assert.equal(list.result.paused, true, `${s.id}: an inbox with pending work comes back paused`);
      run.checks += 2 + s.inbox.length;
    }
  }
  assert.equal(run.model.requests.length, requestsBefore, "the restart and the loads asked the model nothing (no turn re-run)");
  const runs = existsSync(join(run.workdir, "runs.log")) ? readFileSync(join(run.workdir, "runs.log"), "utf8").split("\n").filter(Boolean).length : 0;
  assert.equal(runs, run.toolRuns, "no write command ran again");
  run.checks += 2;
}

/** Lets a command blocked reading `fifo` finish (its daemon is gone); nothing to do when no reader is left. */
export function releaseFifo(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // ENXIO: the reader died with the daemon
  }
}

export function makeFifo(path: string): void {
  if (!existsSync(path)) execFileSync("mkfifo", [path]);
}

export { isAlive };
