/**
 * Context compaction, the pure part: how big the next request is, where the conversation is cut,
 * what the summary request says, and the history that replaces the old one. Kept free of I/O so
 * every rule is table-tested (compaction.test.ts); compactor.ts runs it against a session.
 *
 * The new history is: the system prompt (unchanged), the summary as one message, then the most
 * recent turns verbatim. The tool list is not touched, so the requests after a compaction share a
 * new stable prefix, and the summary request itself repeats the previous request's prefix.
 */
import type { ChatMessage, ToolSpec } from "../provider/types.js";

/** The provider's count for a request we sent: its prompt tokens and how many messages it held. */
export interface ContextAnchor {
  promptTokens: number;
  messages: number;
}

export interface CompactionSettings {
  auto: boolean;
  ratio: number;
  keepRatio: number;
}

export const SUMMARY_HEAD = "[Reasonix] Summary of the earlier conversation";

/**
 * Tokens of text, erring high: UTF-8 bytes / 3 is about one token per CJK character and slightly
 * more than English or code takes, so an estimate never lets a request past the window.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text) / 3);
}

// History messages and tool specs are never changed once made, and the estimate is asked for at
// every round and status update: serializing a fresh session's 25 KB each time showed.
const estimates = new WeakMap<object, number>();

function estimateOf(value: object): number {
  let n = estimates.get(value);
  if (n === undefined) {
    n = estimateTokens(JSON.stringify(value));
    estimates.set(value, n);
  }
  return n;
}

const specBytes = new WeakMap<object, number>();

/**
 * The tool list's estimate, the same number as estimateOf(tools): its JSON is the specs' JSON between
 * brackets and commas. Each spec's size is kept, and the built-in specs are shared by every session
 * (session-tools.ts), so a new session's first status does not serialize its 25 KB of tools again.
 */
function estimateTools(tools: readonly ToolSpec[]): number {
  let bytes = 2 + Math.max(0, tools.length - 1);
  for (const t of tools) {
    let b = specBytes.get(t);
    if (b === undefined) {
      b = Buffer.byteLength(JSON.stringify(t));
      specBytes.set(t, b);
    }
    bytes += b;
  }
  return Math.ceil(bytes / 3);
}

export function estimateMessages(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += estimateOf(m);
  return n;
}

/**
 * The next request's prompt tokens: the provider's count for the last request we sent plus an
 * estimate of what was appended since; before any count (or after a compaction), all estimated.
 */
export function contextEstimate(history: readonly ChatMessage[], tools: readonly ToolSpec[], anchor: ContextAnchor | undefined): number {
  if (anchor && anchor.messages > 0 && anchor.messages <= history.length) return anchor.promptTokens + estimateMessages(history.slice(anchor.messages));
  return estimateTools(tools) + estimateMessages(history);
}

/** Room left for the model's answer: a request above window − reserve would not fit. */
export function outputReserve(window: number): number {
  return Math.min(8192, Math.ceil(window * 0.05));
}

export type Trigger = "none" | "ratio" | "window";

/** Whether to compact before the next round: above the ratio (if auto), always when it would not fit. */
export function compactionTrigger(estimate: number, window: number, s: CompactionSettings): Trigger {
  if (estimate >= window - outputReserve(window)) return "window";
  if (s.auto && estimate >= window * s.ratio) return "ratio";
  return "none";
}

const isSummary = (m: ChatMessage | undefined): boolean => typeof m?.content === "string" && m.content.startsWith(SUMMARY_HEAD);

/** The summary the history starts with after a compaction, if any. */
export function currentSummary(history: readonly ChatMessage[]): string | undefined {
  const m = history.slice(0, 3).find(isSummary);
  return m?.content ?? undefined;
}

/**
 * Where the kept part starts. A cut lies where no tool call is split from its result: at a user
 * message (a turn's start) or an assistant message (its tool results follow it). The earliest turn
 * start whose suffix fits `keepTokens` wins; else the earliest assistant message that fits (inside
 * one long turn); else the latest boundary there is (the kept part then gets its tool outputs
 * trimmed). Undefined when nothing but the system prompt and an earlier summary would be summarised.
 */
export function planCut(history: readonly ChatMessage[], keepTokens: number): number | undefined {
  const sizes = history.map((m) => estimateTokens(JSON.stringify(m)));
  let suffix = 0;
  let userCut: number | undefined;
  let assistantCut: number | undefined;
  let latest: number | undefined;
  for (let i = history.length - 1; i >= 2; i--) {
    suffix += sizes[i]!;
    const role = history[i]!.role;
    if (role !== "user" && role !== "assistant") continue;
    latest ??= i;
    if (suffix > keepTokens) continue;
    if (role === "user") userCut = i;
    else assistantCut = i;
  }
  const cut = userCut ?? assistantCut ?? latest;
  if (cut === undefined) return undefined;
  const summarised = history.slice(1, cut).filter((m) => !isSummary(m));
  return summarised.length > 0 ? cut : undefined;
}

/** What the summary must keep, with the goal passed explicitly rather than hoped for. */
export interface SummaryContext {
  focus?: string | undefined;
  goal?: { text: string; status: string; turns: number; summary?: string | undefined } | undefined;
  mode: string;
  /** The current mode's standing note: the summary re-states it, so a mode outlives compaction. */
  modeNote?: string | undefined;
}

export function summaryInstruction(ctx: SummaryContext): string {
  const lines = [
    "[Reasonix] The conversation above is about to be compacted: it will be replaced by your summary, and only the most recent turns stay verbatim.",
    "Write that summary now, as notes for yourself to carry on the work. Do not call tools. Keep:",
    "- the user's stated goals and requests, in their words where it matters;",
    "- decisions made and why, and constraints the user gave;",
    "- open tasks and the next steps;",
    "- every file path read, created or changed, and what changed;",
    "- commands run and their outcome (passed, failed, with the key error lines);",
    "- anything unresolved or that failed.",
    "Drop chit-chat and tool output that no longer matters. No preamble.",
  ];
  if (ctx.mode !== "normal") lines.push(`The session is in ${ctx.mode} mode.`);
  if (ctx.goal) lines.push(goalLine(ctx.goal), "Keep the goal and how far it got in the summary.");
  if (ctx.focus) lines.push(`Focus the summary on: ${ctx.focus}`);
  return lines.join("\n");
}

function goalLine(goal: NonNullable<SummaryContext["goal"]>): string {
  return `Goal (${goal.status}, ${goal.turns} turns so far): ${goal.text}${goal.summary ? `\nLast progress report: ${goal.summary}` : ""}`;
}

/**
 * The summary request: the conversation before the cut, exactly as it was last sent (so it reads
 * from the provider's cache), then the instruction. When even that would not fit the window, older
 * tool outputs are trimmed and, if need be, the oldest turns left out.
 */
export function summaryRequest(history: readonly ChatMessage[], cut: number, ctx: SummaryContext, budget: number): ChatMessage[] {
  const instruction: ChatMessage = { role: "user", content: summaryInstruction(ctx) };
  let body = history.slice(0, cut);
  if (estimateMessages(body) + estimateTokens(instruction.content ?? "") <= budget) return [...body, instruction];
  body = [body[0]!, ...trimToolOutputs(body.slice(1), 400)];
  while (body.length > 2 && estimateMessages(body) + estimateTokens(instruction.content ?? "") > budget) body = [body[0]!, ...dropOldestTurn(body.slice(1))];
  return [...body, instruction];
}

/** Leaves out the first turn (up to the next user message), never splitting a call from its result. */
function dropOldestTurn(messages: ChatMessage[]): ChatMessage[] {
  const next = messages.findIndex((m, i) => i > 0 && m.role === "user");
  return next < 0 ? messages.slice(-1) : messages.slice(next);
}

/** Tool outputs longer than `maxChars` keep their head and say how much was cut. */
export function trimToolOutputs(messages: readonly ChatMessage[], maxChars: number): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== "tool" || typeof m.content !== "string" || m.content.length <= maxChars) return m;
    const cut = m.content.length - maxChars;
    return { ...m, content: `${m.content.slice(0, maxChars)}\n[… ${cut} more characters trimmed to save context]` };
  });
}

/**
 * The history after a summary: system prompt, the summary as one message, the kept turns (large
 * tool outputs trimmed to fit `keepTokens`). The summary takes the role that keeps turns
 * alternating: an assistant note before a kept user turn, a user note before a kept assistant step.
 */
export function compactedHistory(history: readonly ChatMessage[], cut: number, summary: string, ctx: SummaryContext, keepTokens: number): ChatMessage[] {
  const kept = fitKept(history.slice(cut), keepTokens);
  const goal = ctx.goal ? `\n\n${goalLine(ctx.goal)}` : "";
  const note = ctx.modeNote ? `\n\nStill in force: ${ctx.modeNote}` : "";
  const content = `${SUMMARY_HEAD} (${cut - 1} messages compacted):\n\n${summary.trim()}${goal}${note}`;
  const role = kept[0]?.role === "user" ? "assistant" : "user";
  return [history[0]!, { role, content }, ...kept];
}

function fitKept(kept: ChatMessage[], keepTokens: number): ChatMessage[] {
  if (estimateMessages(kept) <= keepTokens) return kept;
  const outputs = kept.filter((m) => m.role === "tool").length;
  if (outputs === 0) return kept;
  const share = Math.max(400, Math.floor(((keepTokens * 3) / outputs) * 0.8));
  return trimToolOutputs(kept, share);
}

/**
 * When the summary request fails: the same cut, the older part kept but its tool outputs trimmed
 * hard, the kept part's large outputs trimmed to fit, and the oldest turns left out while it still
 * would not fit under `limitTokens`. The turn's own prompt is never left out.
 */
export function trimmedHistory(
  history: readonly ChatMessage[],
  cut: number,
  limitTokens: number,
  keepTokens: number,
  tools: readonly ToolSpec[],
): ChatMessage[] {
  let older = trimToolOutputs(history.slice(1, cut), 200);
  const kept = fitKept(history.slice(cut), keepTokens);
  const size = (): number => estimateTokens(JSON.stringify(tools)) + estimateMessages([history[0]!, ...older, ...kept]);
  while (older.length > 0 && size() > limitTokens) {
    const next = older.findIndex((m, i) => i > 0 && m.role === "user");
    if (next < 0) break;
    older = older.slice(next);
  }
  return [history[0]!, ...older, ...kept];
}

/**
 * How far the estimate runs above the provider's own count (≤ 1), from the last request it
 * counted: budgets compared with estimates are widened by it, so an estimate that errs high does
 * not leave out what would have fitted.
 */
export function estimateScale(history: readonly ChatMessage[], tools: readonly ToolSpec[], anchor: ContextAnchor | undefined): number {
  if (!anchor || anchor.messages <= 0 || anchor.messages > history.length) return 1;
  const estimated = estimateTokens(JSON.stringify(tools)) + estimateMessages(history.slice(0, anchor.messages));
  return Math.min(1, Math.max(0.25, anchor.promptTokens / estimated));
}
