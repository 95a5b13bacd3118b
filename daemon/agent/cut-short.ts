/**
 * A round the provider broke off after the user had seen part of it: the part stays, in the
 * windows and in the model's history, marked as incomplete, so neither the user nor the model takes
 * it for a finished answer.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { CUT_SHORT, ProviderFault } from "../provider/faults.js";
import type { ChatMessage } from "../provider/types.js";

export function keepCutShort(host: { emit(u: SessionUpdate): void; appendHistory(m: ChatMessage): void }, err: unknown): void {
  if (!(err instanceof ProviderFault) || !err.partial) return;
  // Tool calls of a broken round never run: only its text is kept.
  host.appendHistory({ role: "assistant", content: [err.partial.content, CUT_SHORT].filter(Boolean).join("\n\n") });
  host.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n[error] ${err.message}` } });
}
