/**
 * How steadily another window's stream flowed while something heavy ran: the arrival time of each
 * of a session's message chunks at a shim's stdout, and the longest gap between two of them inside
 * a time window. Read from the raw bytes, so nothing of the client's own processing is counted.
 */
import type { AgentProcess } from "./harness.js";

export interface ChunkArrivals {
  /** The longest time between two chunks, counting only gaps that overlap [from, to] (performance.now() times). */
  longestGap(from: number, to: number): number;
}

export function watchChunks(window: AgentProcess, sessionId: string): ChunkArrivals {
  const arrivals: number[] = [];
  window.child.stdout!.on("data", (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    if (text.includes(sessionId) && text.includes("agent_message_chunk")) arrivals.push(performance.now());
  });
  return {
    longestGap(from, to) {
      let longest = 0;
      for (let i = 1; i < arrivals.length; i++) {
        if (arrivals[i]! < from || arrivals[i - 1]! > to) continue;
        longest = Math.max(longest, arrivals[i]! - arrivals[i - 1]!);
      }
      return longest;
    },
  };
}
