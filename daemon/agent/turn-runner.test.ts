/**
 * The agent's turn against an in-memory session: no store, no windows, no HTTP. A scripted model
 * answers each round from a queue; the session port records what the agent did to the session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { pino } from "pino";
import type { ChatMessage, ChatModel, RoundRequest, RoundResult } from "../provider/types.js";
import type { GoalState } from "./goal.js";
import type { LedgerMark, OutcomeKind, SessionPort } from "./session-port.js";
import type { ContextAnchor } from "./compaction.js";
import type { CompactionInfo } from "./compactor.js";
import { TurnRunner } from "./turn-runner.js";
import type { DetachedTurns } from "./window-hold.js";

type Round = Partial<RoundResult> & { onRequest?: () => void };

class MemoryModel implements ChatModel {
  readonly ref = "memory/model";
  readonly model = "model";
  readonly requests: RoundRequest[] = [];
  constructor(private readonly rounds: Round[]) {}
  async stream(req: RoundRequest, _signal: AbortSignal, onDelta: (d: { kind: "thought" | "text"; text: string }) => void): Promise<RoundResult> {
    this.requests.push({ messages: structuredClone(req.messages), tools: req.tools });
    const round = this.rounds.shift() ?? { content: "(no more script)" };
    round.onRequest?.();
    if (round.content) onDelta({ kind: "text", text: round.content });
    return {
      content: round.content ?? "",
      reasoning: round.reasoning ?? "",
      toolCalls: round.toolCalls ?? [],
      finishReason: round.finishReason ?? null,
      usage: round.usage,
    };
  }
}

/** A session in memory: what the agent records, emits and commits, and the state it reads. */
class MemorySession implements SessionPort<string> {
  readonly id = "s1";
  readonly log = pino({ level: "silent" });
  readonly updates: SessionUpdate[] = [];
  readonly marks: LedgerMark[] = [];
  readonly messages: ChatMessage[] = [{ role: "system", content: "sys" }];
  readonly steers: Array<{ id: string; text: string }> = [];
  notes: string[] = [];
  running = false;
  commits = 0;
  modeId = "normal";
  goalState: GoalState | undefined;
  outcome: OutcomeKind | undefined;
  tokens = 0;
  budget = Number.POSITIVE_INFINITY;
  steps = 10;
  toolRuns: string[] = [];

  constructor(readonly model: MemoryModel) {}
  emit(update: SessionUpdate): void {
    this.updates.push(update);
  }
  emitLive(): void {}
  mark(entry: LedgerMark): void {
    this.marks.push(entry);
  }
  history(): readonly ChatMessage[] {
    return this.messages;
  }
  appendHistory(msg: ChatMessage): void {
    this.messages.push(msg);
  }
  takeNotes(): string[] {
    const n = this.notes;
    this.notes = [];
    return n;
  }
  addNote(note: string): void {
    this.notes.push(note);
  }
  setRunning(running: boolean): void {
    this.running = running;
  }
  nameFrom(): void {}
  async commit(): Promise<void> {
    this.commits++;
  }
  storeFault(): unknown {
    return undefined;
  }
  async recoverFromStoreFault(): Promise<void> {}
  createModel(): ChatModel {
    return this.model;
  }
  async settleTools(): Promise<undefined> {
    return undefined;
  }
  toolSpecs() {
    return [];
  }
  async runTool(call: { name: string; arguments: string }): Promise<string> {
    this.toolRuns.push(call.name);
    return `ran ${call.name}`;
  }
  maxSteps(): number {
    return this.steps;
  }
  goalBounds() {
    return { maxTurns: 3, maxSeconds: 3600 };
  }
  mode(): string {
    return this.modeId;
  }
  goal(): GoalState | undefined {
    return this.goalState;
  }
  setGoal(goal: GoalState | undefined): void {
    this.goalState = goal;
  }
  async leaveGoalMode(): Promise<void> {
    this.modeId = "normal";
  }
  acceptedSteers() {
    return [...this.steers];
  }
  async removeSteer(id: string): Promise<void> {
    this.steers.splice(
      this.steers.findIndex((s) => s.id === id),
      1,
    );
  }
  async requeueSteers(): Promise<void> {}
  startMeter(): void {
    this.outcome = undefined;
    this.tokens = 0;
  }
  budgetExceeded(): string | undefined {
    if (this.tokens < this.budget) return undefined;
    this.outcome = "paused";
    return "[warning] budget";
  }
  onUsage(u: { promptTokens: number }): SessionUpdate {
    this.tokens += u.promptTokens;
    return { sessionUpdate: "usage_update", used: this.tokens, size: 1000 };
  }
  settleOutcome(kind: OutcomeKind): OutcomeKind {
    this.outcome ??= kind;
    return this.outcome;
  }
  notifyStatus(): void {}
  window = 1_000_000;
  anchor: ContextAnchor | undefined;
  replaced: CompactionInfo[] = [];
  contextWindow(): number {
    return this.window;
  }
  compactionSettings() {
    return { auto: true, ratio: 0.8, keepRatio: 0.25 };
  }
  contextAnchor(): ContextAnchor | undefined {
    return this.anchor;
  }
  replaceHistory(messages: ChatMessage[], info: CompactionInfo): void {
    this.messages.length = 0;
    this.messages.push(...messages);
    this.anchor = undefined;
    this.replaced.push(info);
  }
  modeNote(): string | undefined {
    return this.modeId === "goal" ? "GOAL NOTE" : undefined;
  }
  contextUpdate(used: number): SessionUpdate {
    return { sessionUpdate: "usage_update", used, size: this.window };
  }
  attached = true;
  policy: DetachedTurns = "hold";
  holdMs = 60_000;
  private readonly waiters = new Set<() => void>();
  detachedTurns(): DetachedTurns {
    return this.policy;
  }
  windowAttached(): boolean {
    return this.attached;
  }
  holdTimeoutMs(): number {
    return this.holdMs;
  }
  waitForWindow(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (v: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(onAttach);
        resolve(v);
      };
      const onAttach = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(onAttach);
      signal.addEventListener("abort", () => done(false), { once: true });
    });
  }
  /** A window attaches: a held turn goes on. */
  attach(): void {
    this.attached = true;
    for (const w of [...this.waiters]) w();
  }
}

const call = (name: string, id = name) => ({ id, name, arguments: "{}" });
const texts = (s: MemorySession) =>
  s.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => (u as { content: { text: string } }).content.text);

test("a turn: prompt recorded and committed first, tool calls run in order, end_turn, recorded and committed last", async () => {
  const model = new MemoryModel([{ toolCalls: [call("a"), call("b")] }, { content: "done" }]);
  const s = new MemorySession(model);
  s.notes = ["[note] plan mode off"];
  const stop = await new TurnRunner(s).run({ origin: "w1", shown: [{ type: "text", text: "hi" }], shownText: "hi", modelText: "hi" });
  assert.equal(stop, "end_turn");
  assert.deepEqual(s.toolRuns, ["a", "b"]);
  assert.equal(s.marks[0]?.type, "turn_start");
  assert.deepEqual(s.marks[1], { type: "turn_end", turnId: (s.marks[0] as { turnId: string }).turnId, stopReason: "end_turn" });
  assert.equal(s.commits, 2);
  assert.equal(model.requests[0]!.messages.at(-1)!.content, "[note] plan mode off\n\nhi", "notes ride along with the user message");
  assert.equal(s.running, false);
  assert.equal(s.outcome, "completed");
});

test("the step limit ends the turn with max_turn_requests and a warning", async () => {
  const model = new MemoryModel(Array.from({ length: 5 }, (_, i) => ({ toolCalls: [call("loop", `c${i}`)] })));
  const s = new MemorySession(model);
  s.steps = 3;
  assert.equal(await new TurnRunner(s).run({ origin: undefined, modelText: "go" }), "max_turn_requests");
  assert.equal(model.requests.length, 3);
  assert.match(texts(s).at(-1)!, /Stopped after 3 model rounds/);
  assert.equal(s.outcome, "max_turn_requests");
});

test("a steer accepted during a round joins the conversation at the next boundary and every window sees it", async () => {
  let s!: MemorySession;
  const model = new MemoryModel([{ toolCalls: [call("a")], onRequest: () => s.steers.push({ id: "i1", text: "also do b" }) }, { content: "ok" }]);
  s = new MemorySession(model);
  const runner = new TurnRunner(s);
  assert.equal(await runner.run({ origin: undefined, modelText: "do a" }), "end_turn");
  const second = model.requests[1]!.messages;
  assert.deepEqual(second.slice(0, model.requests[0]!.messages.length), model.requests[0]!.messages, "the previous request is the prefix");
  assert.deepEqual(second.at(-1), { role: "user", content: "also do b" });
  assert.ok(s.updates.some((u) => u.sessionUpdate === "user_message_chunk"));
  assert.deepEqual(s.steers, []);
});

test("a used-up budget pauses the turn with its warning and end_turn; unrun tool calls still get answers", async () => {
  const model = new MemoryModel([
    { toolCalls: [call("a")], usage: { promptTokens: 600, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0, reasoningTokens: 0 } },
    { toolCalls: [call("b")], usage: { promptTokens: 600, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0, reasoningTokens: 0 } },
  ]);
  const s = new MemorySession(model);
  s.budget = 1000;
  assert.equal(await new TurnRunner(s).run({ origin: undefined, modelText: "go" }), "end_turn");
  assert.deepEqual(s.toolRuns, ["a"]);
  assert.equal(s.outcome, "paused");
  assert.deepEqual(s.messages.at(-1), { role: "tool", tool_call_id: "b", content: "Not run: the turn's budget was used up." });
  assert.ok(s.updates.some((u) => u.sessionUpdate === "usage_update"));
});

test("goal mode: the prompt becomes the goal, the agent continues on its own, and stops at its bound with a warning", async () => {
  const model = new MemoryModel([{ content: "1" }, { content: "2" }, { content: "3" }, { content: "4" }]);
  const s = new MemorySession(model);
  s.modeId = "goal";
  assert.equal(await new TurnRunner(s).run({ origin: undefined, modelText: "ship it" }), "end_turn");
  assert.equal(model.requests.length, 3, "the goal bound is three turns");
  assert.match(model.requests[0]!.messages.at(-1)!.content!, /Goal mode is on[\s\S]*ship it/);
  assert.match(model.requests[1]!.messages.at(-1)!.content!, /Continue working toward the goal: ship it/);
  assert.match(texts(s).at(-1)!, /Goal paused after 3 turns/);
  assert.equal(s.modeId, "normal");
  assert.equal(s.goalState, undefined);
});

test("cancel stops the turn: cancelled, no further round, and a prompt queued behind it still runs", async () => {
  let runner!: TurnRunner<string>;
  const model = new MemoryModel([{ toolCalls: [call("a")], onRequest: () => runner.cancel() }, { content: "second prompt" }]);
  const s = new MemorySession(model);
  runner = new TurnRunner(s);
  const first = runner.run({ origin: undefined, modelText: "one" });
  const second = runner.run({ origin: undefined, modelText: "two" });
  assert.equal(await first, "cancelled");
  assert.equal(await second, "end_turn");
  assert.deepEqual(s.toolRuns, [], "the cancelled turn's tool never ran");
  assert.equal(model.requests.length, 2);
});

test("near the window the history is compacted before the next round: summary first, steers that came meanwhile join that round", async () => {
  let s!: MemorySession;
  const long = "x".repeat(5000);
  const model = new MemoryModel([
    { content: "a1" },
    { content: "THE SUMMARY", onRequest: () => s.steers.push({ id: "st", text: "steer during the summary" }) },
    { content: "a2" },
  ]);
  s = new MemorySession(model);
  s.window = 4000;
  const runner = new TurnRunner(s);
  await runner.run({ origin: undefined, modelText: `one ${long}` });
  assert.equal(await runner.run({ origin: undefined, modelText: `two ${long}` }), "end_turn");
  assert.equal(model.requests.length, 3);
  const summaryReq = model.requests[1]!.messages;
  assert.deepEqual(summaryReq.slice(0, 3), model.requests[0]!.messages.concat([{ role: "assistant", content: "a1" }]), "it repeats the conversation as sent");
  assert.match(summaryReq.at(-1)!.content!, /about to be compacted/);
  const next = model.requests[2]!.messages;
  assert.equal(next[0]!.content, "sys");
  assert.match(next[1]!.content!, /Summary of the earlier conversation[\s\S]*THE SUMMARY/);
  assert.equal(next[2]!.content, `two ${long}`, "the pending prompt is kept verbatim");
  assert.deepEqual(next.at(-1), { role: "user", content: "steer during the summary" });
  assert.ok(texts(s).some((t) => /\[compacted 2 earlier messages to save context\]/.test(t)));
  assert.deepEqual(
    s.replaced.map((r) => r.messages),
    [2],
  );
});

test("compaction keeps the goal: the summary request names it and the new history carries it", async () => {
  const model = new MemoryModel([{ content: "SUM" }]);
  const s = new MemorySession(model);
  s.modeId = "goal";
  s.goalState = { text: "port the parser", status: "active", turns: 2, startedAt: new Date().toISOString(), summary: "lexer done" };
  s.messages.push({ role: "user", content: "u1" }, { role: "assistant", content: "a1" }, { role: "user", content: "u2" }, { role: "assistant", content: "a2" });
  const result = await new TurnRunner(s).compactNow("the parser", new AbortController().signal);
  assert.equal(result.kind, "compacted");
  const instruction = model.requests[0]!.messages.at(-1)!.content!;
  assert.match(instruction, /port the parser[\s\S]*lexer done/);
  assert.match(instruction, /Focus the summary on: the parser/);
  assert.match(s.messages[1]!.content!, /SUM[\s\S]*Goal \(active, 2 turns so far\): port the parser[\s\S]*Still in force: GOAL NOTE/);
});

test("cancel during the summary request: the turn ends cancelled and the history is as it was", async () => {
  let runner!: TurnRunner<string>;
  const long = "y".repeat(5000);
  const model = new MemoryModel([{ content: "a1" }, { content: "never used", onRequest: () => runner.cancel() }]);
  const s = new MemorySession(model);
  s.window = 4000;
  runner = new TurnRunner(s);
  await runner.run({ origin: undefined, modelText: `one ${long}` });
  assert.equal(await runner.run({ origin: undefined, modelText: `two ${long}` }), "cancelled");
  assert.match(model.requests[1]!.messages.at(-1)!.content!, /about to be compacted/);
  assert.equal(model.requests.length, 2, "no round after the cancelled summary");
  assert.deepEqual(
    s.messages.map((m) => m.content?.slice(0, 3)),
    ["sys", "one", "a1", "two"],
  );
  assert.equal(s.replaced.length, 0);
});

test("no window attached: the round streaming finishes, then no model request until a window attaches", async () => {
  let s!: MemorySession;
  const model = new MemoryModel([{ toolCalls: [call("a")], onRequest: () => (s.attached = false) }, { content: "after" }]);
  s = new MemorySession(model);
  const runner = new TurnRunner(s);
  const turn = runner.run({ origin: undefined, modelText: "go" });
  while (!runner.held) await new Promise((r) => setImmediate(r));
  assert.deepEqual(s.toolRuns, ["a"], "the round's tools run (the session's gate holds the changing ones)");
  assert.equal(model.requests.length, 1);
  assert.equal(runner.held.before, "its next model request");
  assert.match(texts(s).join(""), /\[held\] No window is attached, so the turn waits before its next model request/);
  s.attach();
  assert.equal(await turn, "end_turn");
  assert.equal(runner.held, undefined);
  assert.equal(model.requests.length, 2);
});

test("a held turn nobody claims in time ends cancelled, and says so", async () => {
  const model = new MemoryModel([{ content: "never asked" }]);
  const s = new MemorySession(model);
  s.attached = false;
  s.holdMs = 30;
  assert.equal(await new TurnRunner(s).run({ origin: undefined, modelText: "go" }), "cancelled");
  assert.equal(model.requests.length, 0);
  assert.equal(s.outcome, "cancelled");
  assert.match(texts(s).at(-1)!, /\[cancelled\] No window attached within 0.03 s/);
});

test("detachedTurns: continue runs on with no window; cancel stops at the first hold point", async () => {
  const going = new MemorySession(new MemoryModel([{ toolCalls: [call("a")] }, { content: "done" }]));
  going.attached = false;
  going.policy = "continue";
  assert.equal(await new TurnRunner(going).run({ origin: undefined, modelText: "go" }), "end_turn");
  assert.equal(going.model.requests.length, 2);

  const stopping = new MemorySession(new MemoryModel([{ content: "never asked" }]));
  stopping.attached = false;
  stopping.policy = "cancel";
  assert.equal(await new TurnRunner(stopping).run({ origin: undefined, modelText: "go" }), "cancelled");
  assert.equal(stopping.model.requests.length, 0);
});

test("cancel while held: the wait ends at once and the turn is cancelled", async () => {
  const model = new MemoryModel([{ content: "never asked" }]);
  const s = new MemorySession(model);
  s.attached = false;
  const runner = new TurnRunner(s);
  const turn = runner.run({ origin: undefined, modelText: "go" });
  while (!runner.held) await new Promise((r) => setImmediate(r));
  runner.cancel();
  assert.equal(await turn, "cancelled");
  assert.equal(model.requests.length, 0);
  assert.equal(runner.held, undefined);
});
