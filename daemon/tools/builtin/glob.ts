import { relative } from "node:path";
import { z } from "zod";
import { defineTool, type ToolContext } from "../types.js";
import { displayPath } from "../workspace.js";
import { absPath, failure, fsErrorMessage, show, shownPath, textContent, toPosix } from "./common.js";
import { globToRegExp, splitGlob } from "./glob-match.js";
import { SKIPPED_DIRS, walkFiles, type WalkState } from "./walk.js";

const MAX_RESULTS = 1000;

const args = z.object({ pattern: z.string().min(1), path: z.string().optional() });
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
    `"*.ts" matches only at the top; use "**/*.ts" for every folder. Skips ${[...SKIPPED_DIRS].join(" and ")}. ` +
    `Returns at most ${MAX_RESULTS} paths, sorted.`,
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string", description: 'Glob pattern, e.g. "src/**/*.{ts,tsx}".' },
      path: { type: "string", description: "Folder to search from, relative to the working directory or absolute (default: the working directory)." },
    },
    required: ["pattern"],
  },
  args,
  kind: "search",
  title: (a, ctx) => (a.path ? `Find ${a.pattern} in ${shownPath(ctx, a.path)}` : `Find ${a.pattern}`),
  locations: (a, ctx) => [{ path: searchRoot(a, ctx).root }],
  access: (a, ctx) => ({ type: "read", paths: [searchRoot(a, ctx).root] }),
  async run(a, ctx) {
    const { root, rest } = searchRoot(a, ctx);
    let re: RegExp;
    try {
      re = globToRegExp(rest);
    } catch (err) {
      return failure(err instanceof Error ? err.message : String(err));
    }
    const found: string[] = [];
    const state: WalkState = { incomplete: false };
    try {
      for await (const file of walkFiles(root, { signal: ctx.signal }, state)) {
        if (re.test(toPosix(relative(root, file)))) found.push(file);
      }
    } catch (err) {
      return failure(fsErrorMessage(err, show(ctx.cwd, root)));
    }
    if (ctx.signal.aborted) return failure("Cancelled.");
    found.sort();
    const shown = found.slice(0, MAX_RESULTS).map((f) => displayPath(ctx.cwd, f));
    const notes: string[] = [];
    if (found.length > MAX_RESULTS) notes.push(`${found.length - MAX_RESULTS} more matches not shown; use a narrower pattern.`);
    if (state.incomplete) notes.push("The folder is too large to search completely; results are partial.");
    let output = shown.length ? shown.join("\n") : `No files match ${a.pattern}.`;
    if (notes.length) output += `\n\n[${notes.join(" ")}]`;
    return { output, content: [textContent(output)], rawOutput: { count: found.length } };
  },
});

