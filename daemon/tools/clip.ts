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
