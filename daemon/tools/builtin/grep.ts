import { z } from "zod";
import { defineTool, type ToolContext } from "../types.js";
import { absPath, clip, failure, fsErrorMessage, show, shownPath, textContent } from "./common.js";
import { fileFilter, GREP_MAX_LINE_CHARS as MAX_LINE_CHARS } from "./search-job.js";
import { outsideNote, seconds, unfinishedMessage } from "./search-thread.js";
import { SKIPPED_DIRS } from "./walk.js";
import { errorText } from "../../../shared/error-text.js";

const DEFAULT_MAX = 200;
const HARD_MAX = 1000;

const args = z.object({
  pattern: z.string().min(1).describe('JavaScript regular expression (no slashes or flags), e.g. "function\\s+load".'),
  path: z.string().optional().describe("File or folder to search, relative to the working directory or absolute (default: the working directory)."),
  glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" (any folder) or "src/**/*.go" (relative to path).'),
  ignoreCase: z.boolean().optional().describe("Match case-insensitively (default false)."),
  maxResults: z.number().int().min(1).max(HARD_MAX).optional().describe(`Stop after this many matching lines (default ${DEFAULT_MAX}).`),
});

function scope(a: z.infer<typeof args>, ctx: Pick<ToolContext, "cwd">): string {
  return a.path ? ` in ${shownPath(ctx, a.path)}` : "";
}

export const grepTool = defineTool({
  name: "grep",
  description:
    "Search file contents with a JavaScript regular expression, line by line. Prints `path:line: text` for each match. " +
    `Skips ${[...SKIPPED_DIRS].join(" and ")}, binary files, files over 2 MiB and links that lead outside the workspace folders. ` +
    `Stops after maxResults matches (default ${DEFAULT_MAX}); long lines are clipped at ${MAX_LINE_CHARS} characters.`,
  args,
  kind: "search",
  title: (a, ctx) => `Grep ${clip(a.pattern, 60)}${scope(a, ctx)}${a.glob ? ` (${a.glob})` : ""}`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => ({ type: "read", paths: [absPath(ctx, a.path)] }),
  async run(a, ctx) {
    let re: RegExp;
    try {
      re = new RegExp(a.pattern, a.ignoreCase ? "i" : "");
    } catch (err) {
      return failure(`Invalid regular expression ${JSON.stringify(a.pattern)}: ${errorText(err)}`);
    }
    try {
      fileFilter(a.glob); // a bad glob fails here, before a thread starts
    } catch (err) {
      return failure(errorText(err));
    }
    const root = absPath(ctx, a.path);
    const max = a.maxResults ?? DEFAULT_MAX;
    const outcome = await ctx.search.run(
      // root itself is what the permission gate judged: a folder outside the session's, once allowed, is searched.
      {
        kind: "grep",
        root,
        cwd: ctx.cwd,
        inside: [...ctx.roots, root],
        source: re.source,
        flags: re.flags,
        ...(a.glob ? { glob: a.glob } : {}),
        maxResults: max,
      },
      { signal: ctx.signal },
    );
    if (outcome.status === "failed") return failure(fsErrorMessage(outcome.error, show(ctx.cwd, root)));
    if (outcome.status !== "done") return failure(unfinishedMessage(outcome, "pattern"));
    const r = outcome.result;
    const notes: string[] = [];
    if (r.more) notes.push(`Stopped after ${max} matches; narrow the pattern, path or glob to see the rest.`);
    if (r.incomplete) notes.push("The folder is too large to search completely; results are partial.");
    if (r.timedOut) notes.push(`The search took longer than ${seconds(outcome.timeLimitMs)} s and was stopped; results are partial.`);
    const outside = outsideNote(r.outside);
    if (outside) notes.push(outside);
    let output = r.hits.length ? r.hits.join("\n") : "No matches.";
    if (notes.length) output += `\n\n[${notes.join(" ")}]`;
    return {
      output,
      content: [textContent(output)],
      rawOutput: { matches: r.hits.length, files: r.files, ...(r.outside.count ? { skippedLinks: r.outside.count } : {}) },
    };
  },
});
