import { z } from "zod";
import { defineTool } from "../types.js";
import { absPath, failure, fsErrorMessage, plural, shownPath, textContent } from "./common.js";

const DEFAULT_LIMIT = 2000;
/** Minified files have lines of megabytes; one of them must not flood the context. */
const MAX_LINE_CHARS = 2000;
/** Lines stop here even before the line limit, so the tool's result stays whole (MAX_TOOL_RESULT_CHARS). */
const MAX_OUTPUT_CHARS = 96 * 1024;

const args = z.object({
  path: z.string().min(1).describe("File to read, relative to the working directory or absolute."),
  offset: z.number().int().min(1).optional().describe("1-based line to start at (default 1)."),
  limit: z.number().int().min(1).optional().describe(`How many lines to read (default ${DEFAULT_LIMIT}).`),
});

function lineRange(a: z.infer<typeof args>): string {
  if (a.offset === undefined && a.limit === undefined) return "";
  const from = a.offset ?? 1;
  return a.limit === undefined ? ` (from line ${from})` : ` (lines ${from}–${from + a.limit - 1})`;
}

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file. The output has a line number and a tab before each line (the numbers are not part of the file). " +
    `Reads the first ${DEFAULT_LIMIT} lines unless offset/limit say otherwise; use them to page through long files.`,
  args,
  kind: "read",
  title: (a, ctx) => `Read ${shownPath(ctx, a.path)}${lineRange(a)}`,
  locations: (a, ctx) => [a.offset ? { path: absPath(ctx, a.path), line: a.offset } : { path: absPath(ctx, a.path) }],
  access: (a, ctx) => ({ type: "read", paths: [absPath(ctx, a.path)] }),
  async run(a, ctx) {
    const path = absPath(ctx, a.path);
    const shown = shownPath(ctx, a.path);
    let text: string;
    try {
      text = (await ctx.files.read(path)).text;
    } catch (err) {
      return failure(fsErrorMessage(err, shown));
    }
    // Any part read counts: the stale check asks whether the file changed, not what was seen of it.
    ctx.snapshots.remember(path, text);
    if (text === "") return { output: `${shown} is empty.`, content: [textContent("")] };

    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    const start = (a.offset ?? 1) - 1;
    if (start >= lines.length) {
      return failure(`${shown} has ${plural(lines.length, "line")}; offset ${start + 1} is past the end.`);
    }
    const last = Math.min(lines.length, start + (a.limit ?? DEFAULT_LIMIT));
    let clipped = 0;
    let size = 0;
    let full = false;
    const numbered: string[] = [];
    for (let i = start; i < last; i++) {
      const line = lines[i]!;
      let shownLine = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (shownLine.length > MAX_LINE_CHARS) {
        clipped++;
        shownLine = `${shownLine.slice(0, MAX_LINE_CHARS)}… [line clipped at ${MAX_LINE_CHARS} chars]`;
      }
      const entry = `${String(i + 1).padStart(5)}\t${shownLine}`;
      if (numbered.length > 0 && size + entry.length > MAX_OUTPUT_CHARS) {
        full = true;
        break;
      }
      size += entry.length + 1;
      numbered.push(entry);
    }
    const end = start + numbered.length;
    const picked = lines.slice(start, end);

    const notes: string[] = [];
    if (start > 0 || end < lines.length) {
      notes.push(`Showing lines ${start + 1}–${end} of ${lines.length}${full ? ` (the output limit of ${MAX_OUTPUT_CHARS} characters)` : ""}.`);
      if (end < lines.length) notes.push(`Use offset=${end + 1} to read more.`);
    }
    if (clipped) notes.push(`${plural(clipped, "long line")} clipped.`);
    const output = numbered.join("\n") + (notes.length ? `\n\n[${notes.join(" ")}]` : "");
    return {
      output,
      content: [textContent(picked.join("\n"))],
      rawOutput: { totalLines: lines.length, startLine: start + 1, endLine: end },
    };
  },
});
