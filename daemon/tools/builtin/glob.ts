import { z } from "zod";
import { defineTool, type ToolContext } from "../types.js";
import { absPath, failure, fsErrorMessage, show, shownPath, textContent } from "./common.js";
import { globToRegExp, splitGlob } from "./glob-match.js";
import { GLOB_MAX_RESULTS as MAX_RESULTS } from "./search-job.js";
import { outsideNote, seconds, unfinishedMessage } from "./search-thread.js";
import { SKIPPED_DIRS } from "./walk.js";
import { errorText } from "../../../shared/error-text.js";

const args = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "src/**/*.{ts,tsx}".'),
  path: z.string().optional().describe("Folder to search from, relative to the working directory or absolute (default: the working directory)."),
});
type Args = z.infer<typeof args>;

/** Where the walk starts: the path argument plus the pattern's literal leading folders. */
function searchRoot(a: Args, ctx: Pick<ToolContext, "cwd">): { root: string; rest: string } {
  const { prefix, rest } = splitGlob(a.pattern);
  const base = absPath(ctx, a.path);
  return { root: prefix ? absPath({ cwd: base }, prefix) : base, rest };
}

export const globTool = defineTool({
  name: "glob",
  description:
    "Find files whose path matches a glob pattern, relative to `path` (default: the working directory). " +
    "Supports ** (any number of folders), * and ? (within one name), {a,b} and [abc]. " +
    `"*.ts" matches only at the top; use "**/*.ts" for every folder. Skips ${[...SKIPPED_DIRS].join(" and ")} and links that lead outside the workspace folders. ` +
    `Returns at most ${MAX_RESULTS} paths, sorted.`,
  args,
  kind: "search",
  title: (a, ctx) => (a.path ? `Find ${a.pattern} in ${shownPath(ctx, a.path)}` : `Find ${a.pattern}`),
  locations: (a, ctx) => [{ path: searchRoot(a, ctx).root }],
  access: (a, ctx) => ({ type: "read", paths: [searchRoot(a, ctx).root] }),
  async run(a, ctx) {
    const { root, rest } = searchRoot(a, ctx);
    try {
      globToRegExp(rest); // a bad pattern fails here, before a thread starts
    } catch (err) {
      return failure(errorText(err));
    }
    // root itself is what the permission gate judged: a folder outside the session's, once allowed, is listed.
    const outcome = await ctx.search.run({ kind: "glob", root, cwd: ctx.cwd, inside: [...ctx.roots, root], glob: rest }, { signal: ctx.signal });
    if (outcome.status === "failed") return failure(fsErrorMessage(outcome.error, show(ctx.cwd, root)));
    if (outcome.status !== "done") return failure(unfinishedMessage(outcome, "glob pattern"));
    const r = outcome.result;
    const notes: string[] = [];
    if (r.count > MAX_RESULTS) notes.push(`${r.count - MAX_RESULTS} more matches not shown; use a narrower pattern.`);
    if (r.incomplete) notes.push("The folder is too large to search completely; results are partial.");
    if (r.timedOut) notes.push(`The search took longer than ${seconds(outcome.timeLimitMs)} s and was stopped; results are partial.`);
    const outside = outsideNote(r.outside);
    if (outside) notes.push(outside);
    let output = r.shown.length ? r.shown.join("\n") : `No files match ${a.pattern}.`;
    if (notes.length) output += `\n\n[${notes.join(" ")}]`;
    return { output, content: [textContent(output)], rawOutput: { count: r.count, ...(r.outside.count ? { skippedLinks: r.outside.count } : {}) } };
  },
});
