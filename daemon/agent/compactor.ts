/**
 * Compaction against a session: between model rounds (never mid-stream) when the context nears the
 * model's window, or on `/compact`. One summary request to the session's own model, then the model
 * history is replaced and committed (a restart keeps it); the ledger — what the editor was shown —
 * is never touched. When the summary request fails, older tool outputs are trimmed instead.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { ChatMessage, ChatModel, ToolSpec, Usage } from "../provider/types.js";
import { describeCut } from "../provider/round-limits.js";
import {
  compactedHistory,
  compactionTrigger,
  contextEstimate,
  estimateMessages,
  estimateScale,
  estimateTokens,
  outputReserve,
  planCut,
  summaryRequest,
  trimmedHistory,
  type CompactionSettings,
  type ContextAnchor,
  type SummaryContext,
} from "./compaction.js";
import type { GoalState } from "./goal.js";
import { errorText } from "../../shared/error-text.js";

/** What compaction needs of a session (a part of SessionPort). */
export interface CompactionPort {
  history(): readonly ChatMessage[];
  toolSpecs(): ToolSpec[];
  contextWindow(): number;
  compactionSettings(): CompactionSettings;
  /** The provider's count for the last request, if it still describes the history. */
  contextAnchor(): ContextAnchor | undefined;
  /** Puts `messages` in place of the model history (the ledger stays as it is). */
  replaceHistory(messages: ChatMessage[], info: CompactionInfo): void;
  commit(): Promise<void>;
  /** Counts a round's usage like any other; returns its `usage_update`. */
  onUsage(usage: Usage): SessionUpdate;
  /** A `usage_update` saying the context now holds `used` tokens. */
  contextUpdate(used: number): SessionUpdate;
  goal(): GoalState | undefined;
  mode(): string;
  /** The standing instruction of the current mode (plan, goal), if it has one. */
  modeNote(): string | undefined;
}

export interface CompactionInfo {
  /** Messages the summary (or the trimming) stands for. */
  messages: number;
  summarised: boolean;
  focus?: string | undefined;
  tokensBefore: number;
  tokensAfter: number;
}

export type CompactionResult =
  | { kind: "none" }
  | { kind: "cancelled" }
  | { kind: "compacted"; messages: number; before: number; after: number }
  | { kind: "trimmed"; messages: number; before: number; after: number; error: string };

const notice = (text: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });

/** Compacts when the next request nears the window; called before every model round. */
export function compactIfNeeded(port: CompactionPort, model: ChatModel, emit: (u: SessionUpdate) => void, signal: AbortSignal): Promise<CompactionResult> {
  const estimate = contextEstimate(port.history(), port.toolSpecs(), port.contextAnchor());
  const trigger = compactionTrigger(estimate, port.contextWindow(), port.compactionSettings());
  if (trigger === "none") return Promise.resolve({ kind: "none" });
  return compact(port, model, emit, signal, {});
}

export async function compact(
  port: CompactionPort,
  model: ChatModel,
  emit: (u: SessionUpdate) => void,
  signal: AbortSignal,
  opts: { focus?: string | undefined; onDemand?: boolean },
): Promise<CompactionResult> {
  const history = [...port.history()];
  const tools = port.toolSpecs();
  const window = port.contextWindow();
  const settings = port.compactionSettings();
  const before = contextEstimate(history, tools, port.contextAnchor());
  // Asked for far below the window, a compaction still keeps only about a quarter of the conversation.
  const keep = Math.floor(Math.min(window * settings.keepRatio, opts.onDemand ? estimateMessages(history.slice(1)) / 4 : Number.POSITIVE_INFINITY));
  const cut = planCut(history, keep);
  if (cut === undefined) return { kind: "none" };
  const goal = port.goal();
  const ctx: SummaryContext = {
    focus: opts.focus,
    mode: port.mode(),
    modeNote: port.modeNote(),
    goal: goal ? { text: goal.text, status: goal.status, turns: goal.turns, summary: goal.summary } : undefined,
  };
  const messages = cut - 1;
  emit(notice(`\n\n[compacting ${messages} earlier messages to save context…]\n\n`));

  const scale = estimateScale(history, tools, port.contextAnchor());
  const budget = (window - outputReserve(window)) / scale - estimateTokens(JSON.stringify(tools));
  let summary = "";
  let error: string | undefined;
  try {
    const round = await model.stream({ messages: summaryRequest(history, cut, ctx, budget), tools, toolChoice: "none" }, signal, () => undefined);
    if (signal.aborted) return { kind: "cancelled" };
    if (round.usage) port.onUsage(round.usage);
    summary = round.content.trim();
    if (round.cut) error = describeCut(round.cut);
    else if (!summary) error = "the model returned an empty summary";
  } catch (err) {
    if (signal.aborted) return { kind: "cancelled" };
    error = errorText(err);
  }

  // Anything appended while the summary was written (nothing, today) stays after the kept turns.
  const later = port.history().slice(history.length);
  const next = error
    ? trimmedHistory(history, cut, Math.floor((window * settings.ratio) / scale), keep, tools)
    : compactedHistory(history, cut, summary, ctx, keep);
  // In the provider's terms (the estimate errs high by about 1 / scale).
  const after = Math.ceil(contextEstimate([...next, ...later], tools, undefined) * scale);
  port.replaceHistory([...next, ...later], { messages, summarised: !error, focus: opts.focus, tokensBefore: before, tokensAfter: after });
  await port.commit();
  if (error) {
    emit(notice(`[warning] Compaction failed (${error}); older tool outputs were trimmed instead, and the turn goes on.\n\n`));
  } else {
    emit(notice(`[compacted ${messages} earlier messages to save context]\n\n`));
  }
  emit(port.contextUpdate(after));
  return error ? { kind: "trimmed", messages, before, after, error } : { kind: "compacted", messages, before, after };
}
