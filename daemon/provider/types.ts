import type { RoundCut } from "./round-limits.js";

/** One message of the model conversation, in the OpenAI chat shape. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  reasoning_content?: string;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cacheHitTokens: number;
  cacheMissTokens: number;
  reasoningTokens: number;
}

export interface RoundResult {
  content: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  usage: Usage | undefined;
  /** The round passed a bound of round-limits.ts and was stopped there: its tool calls must not run. */
  cut?: RoundCut;
}

/** `notice`: the agent's own word to the user mid-round (a retry), shown as message text. */
export type Delta = { kind: "thought" | "text" | "notice"; text: string };

export interface RoundRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** "none": the tools are listed (the request keeps the cached prefix) but may not be called. */
  toolChoice?: "none";
}

/** One model of one provider, ready to stream a round. */
export interface ChatModel {
  /** "provider/model" */
  readonly ref: string;
  readonly model: string;
  stream(req: RoundRequest, signal: AbortSignal, onDelta: (d: Delta) => void): Promise<RoundResult>;
}
