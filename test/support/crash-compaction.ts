/**
 * The crash matrix's compaction points. One session per point runs on a provider whose context
 * window is small (config.json, `smallWindowConfig`), answering long prompts until the daemon
 * compacts before a model round; the daemon is killed while the summary request is held open, or
 * once the compacted history is committed (its `[compacted …]` notice reached the window, the
 * next round held). The dead daemon's store must hold the old whole history or the new compacted
 * one, never a mix; after the restart the load replays every prompt and answer and the next prompt
 * ends `end_turn` from a compacted history.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SUMMARY_HEAD } from "../../daemon/agent/compaction.js";
import { keys, type Store } from "../../daemon/store/store.js";
import type { ChatMessage, SessionRecord } from "../../daemon/sessions/types.js";
import { newSession, replay, type CrashPoint, type Run, type SessionRef } from "./crash-matrix.js";
import type { Agent } from "./harness.js";
import type { RecordedRequest, ScriptedModel, ScriptedReply } from "./scripted-model.js";

/** About three long exchanges fit (as in test/e2e/compaction.test.ts). */
const WINDOW = 7000;
const SMALL_MODEL = "small/tiny-model";

/** config.json: the built-in provider as it is, and a provider with a small window on the scripted model. */
export function smallWindowConfig(home: string, model: ScriptedModel): void {
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      providers: [{ name: "small", baseUrl: model.url, apiKeyEnv: "DEEPSEEK_API_KEY", models: ["tiny-model"], contextWindow: WINDOW }],
    }),
  );
}

const never = new Promise<never>(() => undefined);
const isSummaryRequest = (r: RecordedRequest): boolean => /about to be compacted/.test(r.body?.messages?.at(-1)?.content ?? "");
const promptText = (k: number, i: number): string =>
  `Prompt ${k}.${i} asks about module ${i}. ${"The parser reads tokens and builds a tree. ".repeat(60)}`.slice(0, 2400);
const answerText = (tag: string): string => `Answer ${tag}: ${"module notes, decisions and paths. ".repeat(20)}done ${tag}.`;
const summaryText = (k: number): string => `SUMMARY ${k}: decisions kept.`;

/** What the point knows of its session: the prompts answered, the one cut, the summary expected. */
interface Compacting {
  session: SessionRef;
  k: number;
  /** prompt numbers in order; the last one's turn was cut */
  prompts: number[];
  expect: "whole" | "compacted";
}

let current: Compacting | undefined;

/** A tag per model message: S (system), u3 / a3 (prompt 3 and its answer), SUM (the summary). */
function tags(history: ChatMessage[], k: number): string[] {
  return history.map((m) => {
    const text = typeof m.content === "string" ? m.content : "";
    if (m.role === "system") return "S";
    if (text.startsWith(SUMMARY_HEAD)) return text.includes(summaryText(k)) ? "SUM" : "SUM?";
    const p = new RegExp(`^(?:Prompt|Answer) ${k}\\.(\\d+)`).exec(text);
    if (p && m.role === "user") return `u${p[1]}`;
    if (p && m.role === "assistant") return `a${p[1]}`;
    return `${m.role}?`;
  });
}

/** Answers prompts; a summary request is held open or answered; the round after it, held. */
function script(run: Run, c: Compacting, summary: "held" | "answered"): void {
  let summarised = false;
  run.model.respond = (req): ScriptedReply => {
    if (isSummaryRequest(req)) {
      summarised = true;
      return summary === "held" ? { content: ["SUMMARY ", "never sent"], holdUntil: never } : { content: [summaryText(c.k)] };
    }
    if (summarised) return { content: [`held ${c.k} `, "never sent"], holdUntil: never };
    const users = (req.body.messages as ChatMessage[]).filter((m) => m.role === "user");
    const tag = new RegExp(`Prompt (${c.k}\\.\\d+)`).exec(String(users.at(-1)?.content ?? ""))?.[1] ?? "?";
    return { content: [answerText(tag)] };
  };
}

/** Long prompts until one's turn compacts first; resolves once the kill may come. */
async function armCompaction(run: Run, summary: "held" | "answered"): Promise<void> {
  const session = await newSession(run);
  await run.window.rpc.request("session/set_config_option", { sessionId: session.id, configId: "model", value: SMALL_MODEL });
  const c: Compacting = { session, k: run.kills, prompts: [], expect: summary === "held" ? "whole" : "compacted" };
  current = c;
  script(run, c, summary);
  for (let i = 1; ; i++) {
    assert.ok(i <= 10, "a compaction within ten long prompts");
    const text = promptText(c.k, i);
    session.sent.add(text);
    c.prompts.push(i);
    const from = run.window.updates.length;
    const requests = run.model.requests.length;
    let ended: string | undefined;
    run.window.prompt(session.id, text).then(
      (r) => (ended = r.stopReason),
      (err: Error) => (ended = `error: ${err.message}`),
    );
    const deadline = Date.now() + 15_000;
    while (ended === undefined && !run.model.requests.slice(requests).some(isSummaryRequest)) {
      assert.ok(Date.now() < deadline, `prompt ${i} ended or compacted`);
      await new Promise((r) => setTimeout(r, 5));
    }
    session.acknowledged.push(text);
    if (ended !== undefined) {
      assert.equal(ended, "end_turn", `prompt ${i}`);
      continue;
    }
    // The turn that compacts: its prompt is in, the summary request is out.
    await run.window.waitForUpdate((u) => u.sessionId === session.id && /\[compacting \d+ earlier messages/.test(u.update.content?.text ?? ""), 15_000, from);
    if (summary === "answered") {
      // The notice comes right after the commit; the next round's request is out and held once its first chunk is in.
      const notice = await run.window.waitForUpdate(
        (u) => u.sessionId === session.id && /\[compacted \d+ earlier messages/.test(u.update.content?.text ?? ""),
        15_000,
        from,
      );
      await run.window.waitForUpdate(
        (u) => u.sessionId === session.id && u.update.content?.text === `held ${c.k} `,
        15_000,
        run.window.updates.indexOf(notice),
      );
    }
    session.interrupted++;
    return;
  }
}

/** The dead daemon's store: the history is the old whole one or the compacted one, numbered without a hole. */
async function checkStoredHistory(run: Run, store: Store): Promise<void> {
  const c = current!;
  const stored = await store.range<ChatMessage>(keys.historyPrefix(c.session.id));
  const numbers = stored.map(({ key }) => Number(key.slice(key.lastIndexOf("!") + 1)));
  assert.deepEqual(
    numbers,
    numbers.map((_, i) => i),
    "history keys numbered 0..n-1",
  );
  const record = await store.get<SessionRecord>(keys.session(c.session.id));
  assert.equal(record?.historyLength, stored.length, "the record counts the history it was committed with");
  const got = tags(
    stored.map((s) => s.value),
    c.k,
  );
  const whole = ["S", ...c.prompts.flatMap((i, n) => (n === c.prompts.length - 1 ? [`u${i}`] : [`u${i}`, `a${i}`]))];
  const isWhole = JSON.stringify(got) === JSON.stringify(whole);
  const kept = got.slice(2);
  const isCompacted =
    got[0] === "S" &&
    got[1] === "SUM" &&
    kept.length > 0 &&
    kept.length < whole.length - 1 &&
    JSON.stringify(whole.slice(-kept.length)) === JSON.stringify(kept);
  assert.ok(isWhole || isCompacted, `the history is the whole one or the compacted one, not a mix: ${got.join(" ")}`);
  assert.equal(isWhole ? "whole" : "compacted", c.expect, `the ${c.expect} history was on disk at the kill: ${got.join(" ")}`);
  run.checks += 4;
}

/** After the restart: every prompt and answer replayed; the next prompt ends from a compacted history. */
async function resumeAfterCompaction(run: Run, next: Agent): Promise<void> {
  const c = current!;
  current = undefined;
  const updates = await replay(next, c.session, run.workdir);
  const text = updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text as string)
    .join("");
  for (const i of c.prompts.slice(0, -1)) assert.ok(text.includes(answerText(`${c.k}.${i}`)), `answer ${c.k}.${i} replayed in full`);
  run.model.respond = (req) => (isSummaryRequest(req) ? { content: [summaryText(c.k)] } : { content: [answerText(`${c.k}.after`)] });
  try {
    const from = run.model.requests.length;
    const text = `after the compaction kill ${c.k}`;
    c.session.sent.add(text);
    assert.equal((await next.prompt(c.session.id, text)).stopReason, "end_turn", "the next prompt works");
    c.session.acknowledged.push(text);
    const last = run.model.requests.slice(from).filter((r) => !isSummaryRequest(r));
    assert.equal(last.length, 1, "one model round after any compaction");
    const messages = last[0]!.body.messages as ChatMessage[];
    assert.equal(tags(messages, c.k)[1], "SUM", "the next request starts from the summary");
    assert.ok(!tags(messages, c.k).includes(`a${c.prompts[0]}`), "not from the whole history");
  } finally {
    run.model.respond = undefined;
  }
  run.checks += c.prompts.length + 3;
}

export const compactionPoints: CrashPoint[] = [
  {
    name: "during compaction (the summary request held open)",
    arm: (run) => armCompaction(run, "held"),
    stored: checkStoredHistory,
    resume: resumeAfterCompaction,
  },
  {
    name: "right after the compacted history is committed",
    arm: (run) => armCompaction(run, "answered"),
    stored: checkStoredHistory,
    resume: resumeAfterCompaction,
  },
];
