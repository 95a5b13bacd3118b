/**
 * What one model round may bring. A provider's answer is untrusted and unbounded: one answer of
 * 512 MiB of reasoning was kept whole in memory and in the ledger, and loading that session took
 * 23 s and 1.6 GB. Each part of one round is capped; past a cap the stream is stopped (the request
 * aborted), the round keeps what came up to the cap and nothing past it, and the turn ends with a
 * warning. The caps are far above any real answer: DeepSeek's longest output, 64 K tokens of
 * reasoning, is about 200–400 KiB of text.
 */

const MiB = 1024 * 1024;

/** UTF-8 bytes per part of one round. */
export const ROUND_LIMITS = {
  reasoning: 4 * MiB,
  text: 4 * MiB,
  /** Every tool call's name and arguments together. */
  arguments: 4 * MiB,
} as const;

/** Tool calls in one round; the index a provider gives a call must stay below it. */
export const MAX_TOOL_CALLS = 256;

/** One server-sent event (a line, or the data lines it joins), in characters: no round needs one this big. */
export const MAX_EVENT_CHARS = 16 * MiB;

export type RoundPart = keyof typeof ROUND_LIMITS | "calls" | "event";

/** Where a round was stopped, and the bound it passed. */
export interface RoundCut {
  part: RoundPart;
  limit: number;
}

const mib = (bytes: number): string => `${bytes / MiB} MiB`;

/** What passed its bound, as a clause: "the model's reasoning passed 4 MiB in one round". */
export function describeCut(cut: RoundCut): string {
  switch (cut.part) {
    case "reasoning":
      return `the model's reasoning passed ${mib(cut.limit)} in one round`;
    case "text":
      return `the model's answer passed ${mib(cut.limit)} in one round`;
    case "arguments":
      return `the model's tool-call arguments passed ${mib(cut.limit)} in one round`;
    case "calls":
      return `the model asked for more than ${cut.limit} tool calls in one round`;
    case "event":
      return `the provider sent one event of more than ${cut.limit / MiB} Mi characters`;
  }
}

/** The line the windows get after the round's last chunk. */
export function cutWarning(cut: RoundCut): string {
  const clause = describeCut(cut);
  const calls = cut.part === "arguments" || cut.part === "calls" ? " and no tool was run" : "";
  return `[warning] ${clause[0]!.toUpperCase()}${clause.slice(1)}; the stream was stopped${calls}.`;
}

/** What the model's history keeps after the round's own text, so the next turn knows. */
export function cutNote(cut: RoundCut): string {
  return `[This answer is incomplete: ${describeCut(cut)}, so the stream was stopped; no tool call of it was run.]`;
}
