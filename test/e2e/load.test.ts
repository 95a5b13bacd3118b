/**
 * Load: 20 real shims with 3 sessions each, all prompting at once for a bounded time
 * (REASONIX_LOAD_SECONDS, 4 in the suite; the soak script runs longer). Every turn must end with the
 * stop reason its script calls for — end_turn, or cancelled for the turns the window cancels — with
 * its chunks whole and in order, and every session of every window must get its first turn through
 * before the others have done more than three turns each on average.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { AgentProcess } from "../support/harness.js";
import type { ScriptedReply } from "../support/scripted-model.js";
import { daemonStatus, world, within } from "./fixture.js";

const SHIMS = Number(process.env.REASONIX_LOAD_SHIMS ?? 20);
const SESSIONS = 3;
const SECONDS = Number(process.env.REASONIX_LOAD_SECONDS ?? 4);
const PIECES = 12;

/** The pieces a turn's reply streams; the tag names the window, session and turn, so a stray chunk shows. */
const pieces = (tag: string) => Array.from({ length: PIECES }, (_, i) => `${tag}:${i} `);

interface Tally {
  turns: number;
  /** how many turns of all sessions had ended when this session's first one did */
  firstAt: number;
  cancelled: number;
  chunks: number;
}

/** Turns ended so far, across every session: starvation is judged by work done, not by the clock. */
let ended = 0;

async function sessionLoop(w: AgentProcess, sessionId: string, tag: string, until: number, tally: Tally): Promise<void> {
  for (let turn = 0; Date.now() < until || tally.turns === 0; turn++) {
    // Every third turn, from the second on, is cancelled by the window once its first chunk is in.
    const cancel = turn % 3 === 1;
    const turnTag = `${tag}.${turn}`;
    const from = w.updates.length;
    const pending = w.prompt(sessionId, `${cancel ? "cancel" : "load"} ${turnTag}`);
    if (cancel) {
      await w.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk", 30_000, from);
      await w.cancel(sessionId);
    }
    const result = await within(60_000, `turn ${turnTag}`, pending);
    const text = w.textOf(sessionId, "agent_message_chunk", from);
    if (cancel) {
      assert.equal(result.stopReason, "cancelled", `turn ${turnTag}`);
      assert.ok(text.startsWith(`${turnTag}:0 `), `turn ${turnTag}: ${text.slice(0, 80)}`);
      tally.cancelled++;
    } else {
      assert.equal(result.stopReason, "end_turn", `turn ${turnTag}`);
      assert.equal(text, pieces(turnTag).join(""), `turn ${turnTag}: every chunk, in order, none of another session's`);
    }
    tally.chunks += w.updatesFor(sessionId, from).filter((u) => u.sessionUpdate === "agent_message_chunk").length;
    tally.turns++;
    ended++;
    if (tally.turns === 1) tally.firstAt = ended;
  }
}

test(`load: ${SHIMS} shims x ${SESSIONS} sessions prompting at once for ${SECONDS} s; every turn ends right, chunks in order, no window starves`, async (t) => {
  const { agent, model, workdir, spawn, home } = await world(t, { connector: "process" });
  model.respond = (req): ScriptedReply => {
    const last = req.body?.messages?.at(-1);
    const m = typeof last?.content === "string" ? /^(load|cancel) (\S+)$/.exec(last.content) : null;
    if (!m) return { content: ["ok"] };
    return m[1] === "cancel" ? { content: [`${m[2]}:0 `], hang: true } : { content: pieces(m[2]!), chunkDelayMs: 2 };
  };
  const windows: AgentProcess[] = [agent];
  for (let i = 1; i < SHIMS; i++) windows.push(spawn());
  await Promise.all(windows.map((w) => w.initialize()));
  const sessions = await Promise.all(
    windows.map(async (w) => Promise.all(Array.from({ length: SESSIONS }, async () => (await w.newSession(workdir)).sessionId))),
  );

  const until = Date.now() + SECONDS * 1000;
  const tallies = windows.map(() => Array.from({ length: SESSIONS }, (): Tally => ({ turns: 0, firstAt: 0, cancelled: 0, chunks: 0 })));
  await Promise.all(windows.flatMap((w, i) => sessions[i]!.map((id, j) => sessionLoop(w, id, `w${i}s${j}`, until, tallies[i]![j]!))));

  const all = tallies.flat();
  const turns = all.reduce((n, x) => n + x.turns, 0);
  const perWindow = tallies.map((ts) => ts.reduce((n, x) => n + x.turns, 0));
  // No window starves: every session's first turn ended while the others had done at most three
  // turns each on average (measured in turns, so a machine slowed by other work does not fail it).
  const fair = SHIMS * SESSIONS * 3;
  for (const [i, ts] of tallies.entries())
    for (const [j, x] of ts.entries())
      assert.ok(x.firstAt >= 1 && x.firstAt <= fair, `window ${i} session ${j}: its first turn ended as turn ${x.firstAt} of all (at most ${fair})`);
  // Nor falls far behind: over a long run (the soak), the slowest window got at least a quarter of
  // the busiest one's turns; in a few seconds the start-up's spread is too large for that to mean much.
  if (SECONDS >= 20) assert.ok(Math.min(...perWindow) * 4 >= Math.max(...perWindow), `turns per window: ${perWindow.join(", ")}`);
  const status = await daemonStatus(home.dir);
  assert.equal(status.runningTurns, 0, "nothing left running");
  const summary = `load: ${SHIMS} shims x ${SESSIONS} sessions for ${SECONDS} s: ${turns} turns (${all.reduce((n, x) => n + x.cancelled, 0)} cancelled), ${all.reduce((n, x) => n + x.chunks, 0)} chunks checked in order; turns per window min ${Math.min(...perWindow)} max ${Math.max(...perWindow)}; the last first turn ended as turn ${Math.max(...all.map((x) => x.firstAt))} of all`;
  t.diagnostic(summary);
  process.stdout.write(`# ${summary}\n`);
});
