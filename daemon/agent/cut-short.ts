/**
 * A round broken off after the user had seen part of it — by the provider, or by us when its output
 * passed a bound — the part stays, in the windows and in the model's history, marked as incomplete,
 * so neither the user nor the model takes it for a finished answer.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { CUT_SHORT, ProviderFault } from "../provider/faults.js";
import { cutNote, cutWarning } from "../provider/round-limits.js";
import type { ChatMessage, RoundResult } from "../provider/types.js";

export function keepCutShort(host: { emit(u: SessionUpdate): void; appendHistory(m: ChatMessage): void }, err: unknown): void {
  if (!(err instanceof ProviderFault) || !err.partial) return;
  // Tool calls of a broken round never run: only its text is kept.
  host.appendHistory({ role: "assistant", content: [err.partial.content, CUT_SHORT].filter(Boolean).join("\n\n") });
  host.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n[error] ${err.message}` } });
}

/**
 * A round stopped at a bound of round-limits.ts: its text (itself bounded) and a note go to the
 * history; its reasoning and its tool calls do not (the calls never run: their arguments may be
 * cut in the middle, and the model is not asked again with all of it), and the windows get the warning.
 */
export function keepOverBound(host: { emit(u: SessionUpdate): void; appendHistory(m: ChatMessage): void }, round: RoundResult): void {
  if (!round.cut) return;
  host.appendHistory({ role: "assistant", content: [round.content, cutNote(round.cut)].filter(Boolean).join("\n\n") });
  host.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n${cutWarning(round.cut)}` } });
}
