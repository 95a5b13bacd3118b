/**
 * The model loop of a turn: model round -> tool calls (in order) -> results -> next round, until a round
 * has no tool calls (end_turn), the step limit (max_turn_requests), or cancel (cancelled).
 * History is only ever appended to, so every request repeats the previous one as its prefix.
 */
import { randomUUID } from "node:crypto";
import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import type { ChatMessage, ChatModel, Delta, RoundResult, ToolSpec, Usage } from "../provider/types.js";
import type { ToolCallRequest } from "../tools/runner.js";
import { keepCutShort, keepOverBound } from "./cut-short.js";
import { errorText } from "../../shared/error-text.js";

export type { ToolCallRequest };

export interface ModelLoopHost {
  emit(update: SessionUpdate): void;
  appendHistory(msg: ChatMessage): void;
  history(): readonly ChatMessage[];
  toolSpecs(): ToolSpec[];
  /** Runs one tool call, reporting it to the editor; returns what the model reads back. */
  runTool(call: ToolCallRequest, signal: AbortSignal): Promise<string>;
  onUsage?(usage: Usage): void;
  /** Checked after each round's tools: true ends the turn there (a goal reported blocked). */
  shouldStop?(): boolean;
  /** Appends steers the user sent during the turn; returns how many joined the conversation. */
  admitSteers?(): Promise<number>;
  /** A per-turn budget that is used up: its warning. The turn then pauses with end_turn. */
  budgetExceeded?(): string | undefined;
  /**
   * Before every model request (each round, a retry, before the compaction in `beforeRound`): where
   * a turn with no window waits for one (window-hold.ts). It cancels through the signal.
   */
  beforeRequest?(signal: AbortSignal): Promise<void>;
  /** Runs before each model round, at a boundary where nothing streams (context compaction). */
  beforeRound?(signal: AbortSignal): Promise<void>;
  /** Rounds run on this turn's behalf elsewhere (subagents): they count against `maxSteps`. */
  extraSteps?(): number;
}

export interface ModelLoopOptions {
  maxSteps: number;
}

const isAbort = (signal: AbortSignal): boolean => signal.aborted;

/**
 * A round's streamed deltas as updates: its answer is one message and its reasoning another (ACP
 * messageId). A retry's notice is a message of its own, and the try after it streams new messages:
 * what an abandoned try showed stays apart from the answer that replaces it.
 */
function messageStream(host: ModelLoopHost): (d: Delta) => void {
  let ids = { thought: randomUUID(), answer: randomUUID() };
  return (d) => {
    if (d.kind === "notice") {
      host.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: d.text } });
      ids = { thought: randomUUID(), answer: randomUUID() };
      return;
    }
    const thought = d.kind === "thought";
    host.emit({
      sessionUpdate: thought ? "agent_thought_chunk" : "agent_message_chunk",
      content: { type: "text", text: d.text },
      messageId: thought ? ids.thought : ids.answer,
    });
  };
}

export async function runModelLoop(host: ModelLoopHost, model: ChatModel, signal: AbortSignal, opts: ModelLoopOptions): Promise<StopReason> {
  for (let step = 0; step + (host.extraSteps?.() ?? 0) < opts.maxSteps; step++) {
    await host.beforeRequest?.(signal);
    if (isAbort(signal)) return "cancelled";
    await host.beforeRound?.(signal);
    if (isAbort(signal)) return "cancelled";
    let round: RoundResult | undefined;
    // A truly empty answer is retried once at the same request boundary.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (attempt > 0) {
        await host.beforeRequest?.(signal);
        if (isAbort(signal)) return "cancelled";
      }
      try {
        round = await model.stream({ messages: [...host.history()], tools: host.toolSpecs() }, signal, messageStream(host));
      } catch (err) {
        if (isAbort(signal)) return "cancelled";
        keepCutShort(host, err);
        throw err;
      }
      if (isAbort(signal)) return "cancelled";
      if (round.content || round.reasoning || round.toolCalls.length > 0 || round.cut) break;
    }
    if (!round) return "end_turn";
    if (round.usage) host.onUsage?.(round.usage);
    // Past a bound of its output the round was stopped: the model's own length limit, in effect.
    if (round.cut) {
      keepOverBound(host, round);
      return "max_tokens";
    }

    const assistant: ChatMessage = { role: "assistant", content: round.content || null };
    if (round.toolCalls.length > 0) {
      // DeepSeek's thinking mode rejects tool-turn history that lost its reasoning.
      assistant.reasoning_content = round.reasoning;
      assistant.tool_calls = round.toolCalls.map((c) => ({
        id: c.id,
        type: "function" as const,
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    host.appendHistory(assistant);

    const overBudget = host.budgetExceeded?.();
    if (overBudget) {
      for (const call of round.toolCalls) host.appendHistory({ role: "tool", tool_call_id: call.id, content: "Not run: the turn's budget was used up." });
      host.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n${overBudget}` } });
      return "end_turn";
    }

    if (round.toolCalls.length === 0) {
      // A steer that arrived during the final round still belongs to this turn: one more round.
      if (round.finishReason !== "length" && !isAbort(signal) && ((await host.admitSteers?.()) ?? 0) > 0) continue;
      return round.finishReason === "length" ? "max_tokens" : "end_turn";
    }
    for (const call of round.toolCalls) {
      let output: string;
      if (isAbort(signal)) {
        output = "Cancelled by the user before this tool ran.";
      } else {
        try {
          output = await host.runTool(call, signal);
        } catch (err) {
          output = `Tool error: ${errorText(err)}`;
        }
      }
      // Every tool call gets its result, even on cancel, so the history stays well-formed.
      host.appendHistory({ role: "tool", tool_call_id: call.id, content: output });
    }
    if (isAbort(signal)) return "cancelled";
    if (host.shouldStop?.()) return "end_turn";
    await host.admitSteers?.();
  }
  host.emit({
    sessionUpdate: "agent_message_chunk",
    content: {
      type: "text",
      text: `\n\n[warning] Stopped after ${opts.maxSteps} model rounds (max_steps). Send a new prompt to continue.`,
    },
  });
  return "max_turn_requests";
}
