/**
 * The OpenAI Responses API's streaming shape for the scripted model: what Codex speaks (it no
 * longer accepts `wire_api = "chat"`), so a peer on Codex and this agent can be timed against the
 * same server and the same scripted content. Text replies only: content pieces become
 * `response.output_text.delta` events, `chunkDelayMs` apart (the first one too), as the chat route
 * streams them after its opening role-only chunk.
 */
import type { ServerResponse } from "node:http";

export async function streamResponses(res: ServerResponse, reply: { content?: string[]; chunkDelayMs?: number }, id: string, model: string): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  const created_at = Math.floor(Date.now() / 1000);
  const itemId = `msg_${id}`;
  const text = (reply.content ?? []).join("");
  const send = (type: string, data: Record<string, unknown>): void => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  };
  const response = (status: string, output: unknown[]) => ({ id: `resp_${id}`, object: "response", created_at, status, model, output });
  send("response.created", { response: response("in_progress", []) });
  send("response.output_item.added", { output_index: 0, item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] } });
  send("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  // The chat route's first event is the role alone, and its first content piece follows after the
  // delay: the first delta here waits the same, so both protocols show the first text equally late.
  for (const delta of reply.content ?? []) {
    if (reply.chunkDelayMs) await new Promise((r) => setTimeout(r, reply.chunkDelayMs));
    if (res.destroyed) return;
    send("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta });
  }
  const item = { id: itemId, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
  send("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text });
  send("response.output_item.done", { output_index: 0, item });
  const output = Math.max(1, Math.ceil(text.length / 4));
  send("response.completed", {
    response: {
      ...response("completed", [item]),
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 100 + output,
      },
    },
  });
  res.end();
}
