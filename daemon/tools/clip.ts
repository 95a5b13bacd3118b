/**
 * Text too long for the model's context (a tool that printed megabytes, a pasted log) is cut to its
 * first and last parts with a note in the middle that says what was left out and how much, so the
 * model knows it did not see everything and how to see more.
 */
import { safeCut } from "../../shared/quote.js";

/** What the model reads of one tool result at most (about 32k tokens). */
export const MAX_TOOL_RESULT_CHARS = 128 * 1024;
/** What the model reads of one prompt at most (about 64k tokens). */
export const MAX_PROMPT_CHARS = 256 * 1024;

export function clipForModel(text: string, max: number, what: string, hint = ""): string {
  if (text.length <= max) return text;
  const head = safeCut(text, Math.floor(max * 0.75));
  const tailStart = safeCut(text, text.length - (max - head));
  const omitted = tailStart - head;
  const note = `[... ${omitted} characters omitted here: ${what} is ${text.length} characters; the first ${head} and the last ${text.length - tailStart} are shown.${hint ? ` ${hint}` : ""}]`;
  return `${text.slice(0, head)}\n\n${note}\n\n${text.slice(tailStart)}`;
}

/** What a command's final update shows of its output at most, beside or instead of a terminal. */
export const OUTPUT_TAIL_BYTES = 4 * 1024;
export const OUTPUT_TAIL_LINES = 64;

/**
 * The end of a command's output for the editor's view: the last OUTPUT_TAIL_LINES lines within
 * OUTPUT_TAIL_BYTES, behind a line saying how much came before when anything was left out (what
 * failed is nearly always at the end). Short output is returned as it is; none is "(no output)".
 */
export function outputTail(output: string): string {
  if (output === "") return "(no output)";
  let bytes = Buffer.from(output, "utf8");
  const total = bytes.length;
  if (bytes.length > OUTPUT_TAIL_BYTES) {
    let start = bytes.length - OUTPUT_TAIL_BYTES;
    // Not in the middle of a character: UTF-8 continuation bytes are 10xxxxxx.
    while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
    bytes = bytes.subarray(start);
  }
  // Back over OUTPUT_TAIL_LINES newlines; the one that ends the last line does not count.
  let pos = bytes.length - (bytes.at(-1) === 0x0a ? 1 : 0);
  let lines = 0;
  while (lines < OUTPUT_TAIL_LINES && pos > 0) {
    const newline = bytes.lastIndexOf(0x0a, pos - 1);
    if (newline < 0) break;
    pos = newline;
    lines++;
  }
  if (lines === OUTPUT_TAIL_LINES) bytes = bytes.subarray(pos + 1);
  if (bytes.length === total) return output;
  return `[… ${total - bytes.length} earlier bytes of output not shown; its end follows]\n${bytes.toString("utf8")}`;
}
