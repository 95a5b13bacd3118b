/**
 * Crash consistency as a matrix (support/crash-matrix.ts): the real daemon process is killed with
 * SIGKILL at each named point, in a seeded order, on one store that grows from kill to kill. The
 * suite runs every point once plus seeded repeats of the cheap ones (REASONIX_CRASH_ROUNDS rounds,
 * REASONIX_CRASH_EXTRA repeats each; the soak script runs more); the seed is printed and
 * REASONIX_CRASH_SEED replays it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  checkSessions,
  checkStore,
  heldTurn,
  inboxCall,
  killDaemon,
  makeFifo,
  newSession,
  orderPoints,
  releaseFifo,
  replay,
  seeded,
  type CrashPoint,
  type Run,
  type SessionRef,
} from "../support/crash-matrix.js";
import { compactionPoints, smallWindowConfig } from "../support/crash-compaction.js";
import { waitForDaemonPid } from "../support/harness.js";
import { world } from "./fixture.js";

const SEED = Number(process.env.REASONIX_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ROUNDS = Number(process.env.REASONIX_CRASH_ROUNDS ?? 1);
/**
 * Points cheap to reach (no new session, or a short held turn): each round kills at EXTRA more of
 * them, seeded, for more kills per run at little cost.
 */
const CHEAP = ["streaming", "inbox enqueue", "inbox update", "inbox delete", "inbox move", "inbox setPaused", "inbox refresh"];
const EXTRA = Number(process.env.REASONIX_CRASH_EXTRA ?? 3);
/** Only the points whose name contains this (when chasing one point). */
const ONLY = process.env.REASONIX_CRASH_ONLY;

/** The session whose inbox the inbox points work on: paused from the start, so no item runs by itself. */
async function inboxSession(run: Run): Promise<SessionRef> {
  const found = run.sessions.find((s) => s.inbox && s.paused);
  if (found) return found;
  const s = await newSession(run, { inbox: [], paused: true });
  await inboxCall(run, "setPaused", { sessionId: s.id, paused: true });
  return s;
}

/** An item of the inbox session to work on, enqueued first when there is none. */
async function someItem(run: Run, s: SessionRef, min = 1): Promise<{ id: string; text: string }> {
  while (s.inbox!.length < min) await enqueue(run, s);
  return s.inbox![Math.floor(run.rand() * s.inbox!.length)]!;
}

async function enqueue(run: Run, s: SessionRef): Promise<void> {
  const text = `follow-up ${run.kills}-${Math.floor(run.rand() * 1e6)}`;
  const r = await inboxCall(run, "enqueue", { sessionId: s.id, text, intent: "followup" });
  s.inbox!.push({ id: r.itemId, text });
  s.sent.add(text);
}

let inFlight: { session: SessionRef; text: string } | undefined;

/** Bytes a process has read so far, from /proc (sockets included). */
function bytesRead(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))![1]);
}
/** How the in-flight enqueues came out: written whole before the kill, or not at all. */
const flights = { landed: 0, lost: 0 };

const flood = (k: number) => Array.from({ length: 2000 }, (_, i) => `f${k}.${i}|`);

const points: CrashPoint[] = [
  {
    name: "streaming",
    arm: async (run) => heldTurn(run, await newSession(run), `stream ${run.kills}`),
  },
  {
    name: "between a tool call and its result",
    arm: async (run) => {
      const s = await newSession(run);
      await run.window.rpc.request("session/set_config_option", { sessionId: s.id, configId: "tool_approval", value: "danger-full-access" });
      const fifo = join(run.workdir, `gate-${run.kills}.fifo`);
      makeFifo(fifo);
      const id = `write-${run.kills}`;
      run.model.enqueue({ toolCalls: [{ id, name: "run_command", arguments: { command: `echo ${id} >> runs.log; cat < gate-${run.kills}.fifo` } }] });
      const text = `run ${run.kills}`;
      s.sent.add(text);
      const from = run.window.updates.length;
      run.window.prompt(s.id, text).catch(() => undefined);
      // The daemon names the call itself (toolCallId); the command line tells which one it is.
      await run.window.waitForUpdate(
        (u) => u.sessionId === s.id && u.update.sessionUpdate === "tool_call_update" && u.update.status === "in_progress",
        15_000,
        from,
      );
      // The command has started when its line is in the file: the write happened, its result has not.
      const deadline = Date.now() + 15_000;
      while (!(existsSync(join(run.workdir, "runs.log")) && readFileSync(join(run.workdir, "runs.log"), "utf8").includes(id))) {
        assert.ok(Date.now() < deadline, "the command started");
        await new Promise((r) => setTimeout(r, 10));
      }
      run.toolRuns++;
      s.acknowledged.push(text);
      s.interrupted++;
    },
    verify: async (run) => releaseFifo(join(run.workdir, `gate-${run.kills - 1}.fifo`)),
  },
  {
    name: "while a permission question waits",
    arm: async (run) => {
      const s = await newSession(run);
      run.window.onPermission = () => new Promise(() => undefined);
      run.model.enqueue({ toolCalls: [{ id: `ask-${run.kills}`, name: "run_command", arguments: { command: "echo asked >> asked.log" } }] });
      const text = `ask ${run.kills}`;
      s.sent.add(text);
      const from = run.window.agentRequests.length;
      run.window.prompt(s.id, text).catch(() => undefined);
      await run.window.waitForAgentRequest((r) => r.method === "session/request_permission", 15_000, from);
      s.acknowledged.push(text);
      s.interrupted++;
    },
    verify: async (run) => assert.equal(existsSync(join(run.workdir, "asked.log")), false, "the unanswered command never ran"),
  },
  {
    name: "inbox enqueue",
    arm: async (run) => enqueue(run, await inboxSession(run)),
  },
  {
    // The one point whose outcome is open: the kill comes once the daemon has read the request off
    // its socket (its read byte count says so), before or while it writes the item; either the item
    // is there whole, with its text, or not at all.
    name: "inbox enqueue in flight",
    arm: async (run) => {
      const s = await inboxSession(run);
      const text = `in flight ${run.kills} ${"y".repeat(1024 * 1024)}`;
      s.sent.add(text);
      const daemon = await waitForDaemonPid(run.home);
      const before = bytesRead(daemon);
      run.window.writeRaw(
        `${JSON.stringify({ jsonrpc: "2.0", id: `flight-${run.kills}`, method: "_reasonix.io/session/inbox/enqueue", params: { sessionId: s.id, text } })}\n`,
      );
      inFlight = { session: s, text };
      const deadline = Date.now() + 15_000;
      while (bytesRead(daemon) - before < text.length) {
        assert.ok(Date.now() < deadline, "the daemon read the request");
        await new Promise((r) => setImmediate(r));
      }
      // A seeded pause of 0-150 ms moves the kill across the parse, the checks and the write (40-80 ms
      // from the read to the answer here), so runs see both outcomes; it waits for nothing, and either
      // outcome passes.
      await new Promise((r) => setTimeout(r, Math.floor(run.rand() * 150)));
    },
    verify: async (_run, next) => {
      const { session: s, text } = inFlight!;
      inFlight = undefined;
      const list = await next.rawRequest({ id: `flight-list-${s.id}`, method: "_reasonix.io/session/inbox/list", params: { sessionId: s.id } }, 15_000);
      const known = new Set(s.inbox!.map((i) => i.id));
      const extra = (list.result.items as Array<{ itemId: string }>).filter((i) => !known.has(i.itemId));
      assert.ok(extra.length <= 1, "at most the one item in flight is new");
      if (extra[0]) s.inbox!.push({ id: extra[0].itemId, text });
      flights[extra[0] ? "landed" : "lost"]++;
    },
  },
  {
    name: "inbox steer",
    arm: async (run) => {
      const s = await inboxSession(run);
      await heldTurn(run, s, `steered turn ${run.kills}`);
      const text = `steer ${run.kills}`;
      s.sent.add(text);
      const r = await run.window.rawRequest({
        id: `steer-${run.kills}`,
        method: "_reasonix.io/session/steer",
        params: { sessionId: s.id, prompt: [{ type: "text", text }] },
      });
      assert.equal(r.result.disposition, "steer_accepted");
      s.inbox!.push({ id: r.result.itemId, text });
    },
  },
  {
    name: "inbox update",
    arm: async (run) => {
      const s = await inboxSession(run);
      const item = await someItem(run, s);
      const list = await inboxCall(run, "list", { sessionId: s.id });
      const pending = list.items.find((i: { itemId: string; state: string }) => i.itemId === item.id && ["queued", "blocked", "uncertain"].includes(i.state));
      if (!pending) return enqueue(run, s);
      item.text = `updated ${run.kills}`;
      s.sent.add(item.text);
      await inboxCall(run, "update", { sessionId: s.id, itemId: item.id, text: item.text });
    },
  },
  {
    name: "inbox delete",
    arm: async (run) => {
      const s = await inboxSession(run);
      const list = await inboxCall(run, "list", { sessionId: s.id });
      // Queued items only: an uncertain one is what the retry point needs.
      const queued = (items: Array<{ itemId: string; state: string }>) => items.filter((i) => i.state === "queued");
      if (queued(list.items).length === 0) await enqueue(run, s);
      const again = queued((await inboxCall(run, "list", { sessionId: s.id })).items);
      const victim = again[Math.floor(run.rand() * again.length)]!.itemId;
      await inboxCall(run, "delete", { sessionId: s.id, itemId: victim });
      s.inbox = s.inbox!.filter((i) => i.id !== victim);
    },
  },
  {
    name: "inbox move",
    arm: async (run) => {
      const s = await inboxSession(run);
      await someItem(run, s, 2);
      const list = await inboxCall(run, "list", { sessionId: s.id });
      const pending = list.items.filter((i: { state: string }) => ["queued", "blocked", "uncertain"].includes(i.state));
      const item = pending[Math.floor(run.rand() * pending.length)].itemId as string;
      const to = Math.floor(run.rand() * s.inbox!.length);
      await inboxCall(run, "move", { sessionId: s.id, itemId: item, toIndex: to });
      const order = s.inbox!.filter((i) => i.id !== item);
      order.splice(Math.min(to, order.length), 0, s.inbox!.find((i) => i.id === item)!);
      s.inbox = order;
    },
  },
  {
    name: "inbox setPaused",
    arm: async (run) => {
      const s = await inboxSession(run);
      await inboxCall(run, "setPaused", { sessionId: s.id, paused: true });
    },
  },
  {
    name: "inbox retry",
    // The steer a kill left unapplied is uncertain after the restart: the one item retry takes.
    after: ["inbox steer"],
    arm: async (run) => {
      const s = await inboxSession(run);
      const list = await inboxCall(run, "list", { sessionId: s.id });
      const uncertain = list.items.find((i: { state: string }) => i.state === "uncertain" || i.state === "blocked");
      assert.ok(uncertain, `an uncertain item to retry: ${JSON.stringify(list.items.map((i: { state: string }) => i.state))}`);
      await inboxCall(run, "retry", { sessionId: s.id, itemId: uncertain.itemId });
    },
  },
  {
    name: "inbox refresh",
    arm: async (run) => {
      const s = await inboxSession(run);
      const item = await someItem(run, s);
      await inboxCall(run, "refresh", { sessionId: s.id, itemId: item.id });
    },
  },
  {
    name: "a prompt waiting in the inbox behind a turn",
    arm: async (run) => {
      const s = await newSession(run, { inbox: [] });
      await heldTurn(run, s, `first ${run.kills}`);
      const text = `waiting ${run.kills}`;
      s.sent.add(text);
      run.window.prompt(s.id, text).catch(() => undefined);
      const deadline = Date.now() + 15_000;
      for (;;) {
        const list = await inboxCall(run, "list", { sessionId: s.id });
        const item = list.items.find((i: { source: string }) => i.source === "prompt");
        if (item) {
          s.inbox!.push({ id: item.itemId, text });
          break;
        }
        assert.ok(Date.now() < deadline, "the second prompt was parked in the inbox");
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  },
  {
    name: "during a store batch (a flood of chunks)",
    arm: async (run) => {
      const s = await newSession(run);
      const k = run.kills;
      run.model.enqueue({ content: flood(k), chunkDelayMs: 1 });
      const text = `flood ${k}`;
      s.sent.add(text);
      const at = 100 + Math.floor(run.rand() * 500);
      const from = run.window.updates.length;
      run.window.prompt(s.id, text).catch(() => undefined);
      await run.window.waitForUpdate((u) => u.sessionId === s.id && u.update.content?.text === `f${k}.${at}|`, 20_000, from);
      s.acknowledged.push(text);
      s.interrupted++;
      (s as SessionRef & { flood?: number }).flood = k;
    },
    verify: async (run, next) => {
      const s = run.sessions.at(-1) as SessionRef & { flood?: number };
      const updates = await replay(next, s, run.workdir);
      const text = updates
        .filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => u.content.text)
        .join("");
      const streamed = text.slice(0, text.indexOf("\n\n[interrupted]"));
      assert.ok(flood(s.flood!).join("").startsWith(streamed), "what was stored of the flood is its beginning, in order, nothing twice");
    },
  },
  {
    name: "during a large prompt's batch",
    arm: async (run) => heldTurn(run, await newSession(run), `large ${run.kills} ${"x".repeat(1024 * 1024)}`, `held large ${run.kills}`),
  },
  ...compactionPoints,
];

test(`crash matrix: kill -9 of the daemon at each named point; after every restart the store is whole and nothing acknowledged is lost or repeated (seed ${SEED})`, async (t) => {
  t.diagnostic(`crash seed ${SEED}, ${ROUNDS} round(s) of ${points.length} points and ${EXTRA} repeats (replay: REASONIX_CRASH_SEED=${SEED})`);
  process.stdout.write(`# crash seed ${SEED}\n`);
  const { agent, model, workdir, home, spawn } = await world(t, { connector: "process", prepare: smallWindowConfig });
  await agent.initialize();
  const run: Run = { model, workdir, home: home.dir, window: agent, sessions: [], rand: seeded(SEED), toolRuns: 0, kills: 0, checks: 0 };
  const byPoint = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    const chosen = ONLY ? points.filter((p) => p.name.includes(ONLY)) : points;
    const cheap = chosen.filter((p) => CHEAP.includes(p.name));
    const again = Array.from({ length: cheap.length > 0 ? EXTRA : 0 }, () => cheap[Math.floor(run.rand() * cheap.length)]!);
    for (const point of orderPoints([...chosen, ...again], run.rand)) {
      await t.test(point.name, async () => {
        await point.arm(run);
        const requestsBefore = model.requests.length;
        await killDaemon(run, [run.window]);
        await checkStore(run, point);
        const next = spawn();
        await next.initialize();
        await point.verify?.(run, next);
        await checkSessions(run, next, requestsBefore);
        await point.resume?.(run, next);
        run.window = next;
        byPoint.set(point.name, (byPoint.get(point.name) ?? 0) + 1);
      });
    }
  }
  // The last restarted daemon takes new work: a prompt on a fresh session ends normally.
  const fresh = await run.window.newSession(workdir);
  assert.equal((await run.window.prompt(fresh.sessionId, "after the restarts")).stopReason, "end_turn");
  const summary = `crash matrix: ${run.kills} kills (seed ${SEED}) over ${byPoint.size} points, ${run.sessions.length} sessions, ${run.checks} checks passed; in-flight enqueues written whole ${flights.landed}, not written ${flights.lost}`;
  t.diagnostic(summary);
  process.stdout.write(`# ${summary}\n`);
});
