import { ExactId } from "./exact-id.js";

/**
 * NDJSON framing shared by the shim (editor stdio) and tests.
 *
 * Lines are split on "\n" only; a trailing "\r" is kept out of the JSON. A line longer than
 * `maxLineBytes` is never buffered whole: its bytes are discarded as they arrive and the caller
 * is told once, so a hostile 33 MiB line costs no more memory than the limit.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface LineReaderEvents {
  line(text: string): void;
  /** `head` is the line's first bytes, enough to find a request id to answer. */
  oversize(bytes: number, head: string): void;
}

export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private discarding = 0;
  private head = "";

  constructor(
    private readonly events: LineReaderEvents,
    private readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (this.discarding > 0) {
        this.discarding += piece.length;
      } else if (this.size + piece.length > this.maxLineBytes) {
        this.head = Buffer.concat([...this.chunks, piece.subarray(0, 1024)])
          .subarray(0, 1024)
          .toString("utf8");
        this.discarding = this.size + piece.length;
        this.chunks = [];
        this.size = 0;
      } else if (piece.length > 0) {
        this.chunks.push(piece);
        this.size += piece.length;
      }
      if (nl === -1) break;
      this.finishLine();
      start = nl + 1;
    }
  }

  /** Flushes a final line that had no newline (stdin EOF). */
  end(): void {
    if (this.size > 0 || this.discarding > 0) this.finishLine();
  }

  private finishLine(): void {
    if (this.discarding > 0) {
      const bytes = this.discarding;
      this.discarding = 0;
      const head = this.head;
      this.head = "";
      this.events.oversize(bytes, head);
      return;
    }
    const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    let text = buf.toString("utf8");
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text.trim().length > 0) this.events.line(text);
  }
}

/**
 * Finds the top-level "id" of a JSON-RPC message from its first bytes, when it comes before any
 * nested object (as every common serializer writes it), so an oversize request still gets an
 * answer its sender is waiting for. A number JavaScript would round or rewrite
 * (18446744073709551617, 1e400, 1.50) is kept as its JSON text, as the shim keeps it everywhere.
 */
export function idFromHead(head: string): number | string | ExactId | null {
  const m = /^\s*\{[^{]*?"id"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")/.exec(head);
  if (!m) return null;
  const raw = m[1]!;
  try {
    const id = JSON.parse(raw) as number | string;
    if (typeof id === "number" && !Number.isSafeInteger(id) && String(id) !== raw) return new ExactId(raw);
    return id;
  } catch {
    return null;
  }
}
