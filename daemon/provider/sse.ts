/**
 * Server-sent events, parsed as the openai SDK parses them (fields `event` and `data`, comments,
 * CR LF or LF line ends, multi-line data joined by "\n", an event per blank line), but in one
 * synchronous pass over each network read. The SDK hands every event through four nested async
 * generators; with many sessions streaming, that machinery (its promises and their garbage) was
 * a fifth of the daemon's CPU per chunk.
 *
 * Linear in what arrives: a line that spans many reads is searched for its end only in each new
 * read, never again from its start. A line, or an event's data, longer than the parser's bound
 * throws SseEventTooLarge instead of growing without end.
 */
export interface SseEvent {
  event: string | null;
  data: string;
}

export class SseEventTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`an event of the stream is longer than ${limit} characters`);
  }
}

export class SseParser {
  private rest = "";
  private event: string | null = null;
  private data: string[] = [];
  private dataChars = 0;
  /** Passed the bound after completing events in the same read: those go out first, this at the next call. */
  private failed: SseEventTooLarge | undefined;

  constructor(private readonly maxEventChars = Number.POSITIVE_INFINITY) {}

  /** Feeds decoded text; returns the events it completed, in order. */
  push(text: string): SseEvent[] {
    if (this.failed) throw this.failed;
    const out: SseEvent[] = [];
    try {
      this.read(text, out);
    } catch (err) {
      if (!(err instanceof SseEventTooLarge) || out.length === 0) throw err;
      this.failed = err;
      this.rest = "";
      this.data = [];
    }
    return out;
  }

  private read(text: string, out: SseEvent[]): void {
    const first = text.indexOf("\n");
    if (first === -1) {
      // No line ends in this read: the pending one only grows.
      this.rest += text;
      this.bound(this.rest.length);
      return;
    }
    const buf = this.rest + text;
    let start = 0;
    for (let nl = this.rest.length + first; nl !== -1; nl = buf.indexOf("\n", start)) {
      const end = nl > start && buf.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      this.line(buf.slice(start, end), out);
      start = nl + 1;
    }
    this.rest = buf.slice(start);
    this.bound(this.rest.length);
  }

  private bound(chars: number): void {
    if (chars > this.maxEventChars) throw new SseEventTooLarge(this.maxEventChars);
  }

  /** The end of the stream: a last line without its newline still counts, as in the SDK. */
  end(): SseEvent[] {
    if (this.failed) throw this.failed;
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
      this.dataChars = 0;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" starts a comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") {
      this.dataChars += value.length + 1;
      this.bound(this.dataChars);
      this.data.push(value);
    }
  }
}
