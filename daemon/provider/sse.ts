/**
 * Server-sent events, parsed as the openai SDK parses them (fields `event` and `data`, comments,
 * CR LF or LF line ends, multi-line data joined by "\n", an event per blank line), but in one
 * synchronous pass over each network read. The SDK hands every event through four nested async
 * generators; with many sessions streaming, that machinery (its promises and their garbage) was
 * a fifth of the daemon's CPU per chunk.
 */
export interface SseEvent {
  event: string | null;
  data: string;
}

export class SseParser {
  private rest = "";
  private event: string | null = null;
  private data: string[] = [];

  /** Feeds decoded text; returns the events it completed, in order. */
  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    const buf = this.rest + text;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf("\n", start);
      if (nl === -1) break;
      const end = nl > start && buf.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      this.line(buf.slice(start, end), out);
      start = nl + 1;
    }
    this.rest = buf.slice(start);
    return out;
  }

  /** The end of the stream: a last line without its newline still counts, as in the SDK. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.rest) this.line(this.rest.endsWith("\r") ? this.rest.slice(0, -1) : this.rest, out);
    this.rest = "";
    this.line("", out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.event === null && this.data.length === 0) return;
      out.push({ event: this.event, data: this.data.join("\n") });
      this.event = null;
      this.data = [];
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" starts a comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
  }
}
