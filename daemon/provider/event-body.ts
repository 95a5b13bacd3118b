/**
 * A streamed answer's body as events, read in one synchronous pass per network read (sse.ts): from
 * the socket stream itself when node-fetch.ts kept it raw, else from the Response's body (an event
 * stream a gateway labelled as something else, read whole). Besides the chunks it notes what the
 * retry logic (round-stream.ts) judges a try by: whether `[DONE]` came (a provider that never sends
 * a finish_reason has still finished) and the body's first bytes (to name an HTML page or a JSON
 * error that came where events should be).
 */
import type { Readable } from "node:stream";
import { rawBody } from "./node-fetch.js";
import { SseParser, type SseEvent } from "./sse.js";
import { MAX_EVENT_CHARS } from "./round-limits.js";

const HEAD_CHARS = 4096;

export interface EventBody {
  /** Hands each event's JSON to `onChunk` until `[DONE]` or the end; rejects as undici would on a break. */
  consume(onChunk: (chunk: unknown) => void): Promise<void>;
  finished(): boolean;
  head(): string;
}

/** `inStreamError` turns an `{"error": …}` event into the error the SDK would have thrown. */
export function eventBody(response: Response, inStreamError: (error: object) => Error): EventBody {
  let done = false;
  let head = "";
  const parser = new SseParser(MAX_EVENT_CHARS);
  const feed = (text: string, events: SseEvent[], onChunk: (chunk: unknown) => void): void => {
    if (head.length < HEAD_CHARS) head = (head + text).slice(0, HEAD_CHARS);
    for (const ev of events) {
      if (done) continue;
      if (ev.data.startsWith("[DONE]")) {
        done = true;
        continue;
      }
      const chunk = JSON.parse(ev.data) as { error?: unknown } | null;
      if (chunk?.error) throw inStreamError(chunk.error as object);
      onChunk(chunk);
    }
  };
  return {
    finished: () => done,
    head: () => head,
    consume(onChunk) {
      const raw = rawBody(response);
      if (raw) return readRaw(raw, parser, (text, events) => feed(text, events, onChunk));
      return readWeb(response, parser, (text, events) => feed(text, events, onChunk));
    },
  };
}

async function readWeb(response: Response, parser: SseParser, feed: (text: string, events: SseEvent[]) => void): Promise<void> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let ended = false;
  try {
    while (!ended) {
      const read = await reader.read();
      ended = read.done;
      if (ended) {
        const text = decoder.decode();
        feed(text, [...parser.push(text), ...parser.end()]);
      } else {
        const text = decoder.decode(read.value, { stream: true });
        feed(text, parser.push(text));
      }
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => undefined);
  }
}

function readRaw(raw: Readable, parser: SseParser, feed: (text: string, events: SseEvent[]) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      raw.destroy();
      reject(err);
    };
    raw.setEncoding("utf8");
    raw.on("data", (text: string) => {
      try {
        feed(text, parser.push(text));
      } catch (err) {
        fail(err);
      }
    });
    raw.on("end", () => {
      try {
        feed("", parser.end());
      } catch (err) {
        fail(err);
        return;
      }
      settled = true;
      resolve();
    });
    raw.on("error", (err) => fail(new TypeError("terminated", { cause: err })));
    // The connection closing before the end is the stream breaking off, as undici reports it.
    raw.on("close", () => fail(new TypeError("terminated", { cause: new Error("other side closed") })));
  });
}
