import { readFile, stat } from "node:fs/promises";
import { basename, relative } from "node:path";
import { z } from "zod";
import { defineTool, type ToolContext } from "../types.js";
import { decodeBytes, looksBinary } from "../local-files.js";
import { displayPath } from "../workspace.js";
import { absPath, clip, failure, fsErrorMessage, show, shownPath, textContent, toPosix } from "./common.js";
import { globToRegExp } from "./glob-match.js";
import { SKIPPED_DIRS, walkFiles, type WalkState } from "./walk.js";

const DEFAULT_MAX = 200;
const HARD_MAX = 1000;
const MAX_LINE_CHARS = 300;
const MAX_FILE_BYTES = 2 * 1024 * 1024;

const args = z.object({
  pattern: z.string().min(1),
  path: z.string().optional(),
  glob: z.string().optional(),
  ignoreCase: z.boolean().optional(),
  maxResults: z.number().int().min(1).max(HARD_MAX).optional(),
});

/** A filter without "/" matches file names anywhere ("*.ts"), as in ripgrep's --glob. */
function fileFilter(glob: string | undefined): ((root: string, file: string) => boolean) | undefined {
  if (!glob) return undefined;
  const re = globToRegExp(glob);
  return glob.includes("/") ? (root, file) => re.test(toPosix(relative(root, file))) : (_root, file) => re.test(basename(file));
}

async function searchFile(file: string, re: RegExp, onMatch: (line: number, text: string) => boolean): Promise<void> {
  try {
    if ((await stat(file)).size > MAX_FILE_BYTES) return;
    const bytes = await readFile(file);
    if (looksBinary(bytes)) return;
    const lines = decodeBytes(bytes).text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (re.test(lines[i]!) && !onMatch(i + 1, lines[i]!.replace(/\r$/, ""))) return;
    }
  } catch {
    // Unreadable files (permissions, vanished mid-walk) are simply not searched.
  }
}

function scope(a: z.infer<typeof args>, ctx: Pick<ToolContext, "cwd">): string {
  return a.path ? ` in ${shownPath(ctx, a.path)}` : "";
}

export const grepTool = defineTool({
  name: "grep",
  description:
    "Search file contents with a JavaScript regular expression, line by line. Prints `path:line: text` for each match. " +
    `Skips ${[...SKIPPED_DIRS].join(" and ")}, binary files and files over 2 MiB. ` +
    `Stops after maxResults matches (default ${DEFAULT_MAX}); long lines are clipped at ${MAX_LINE_CHARS} characters.`,
  parameters: {
    type: "object",
    properties: {
      pattern: { type: "string", description: 'JavaScript regular expression (no slashes or flags), e.g. "function\\s+load".' },
      path: { type: "string", description: "File or folder to search, relative to the working directory or absolute (default: the working directory)." },
      glob: { type: "string", description: 'Only search files matching this glob, e.g. "*.ts" (any folder) or "src/**/*.go" (relative to path).' },
      ignoreCase: { type: "boolean", description: "Match case-insensitively (default false)." },
      maxResults: { type: "integer", minimum: 1, maximum: HARD_MAX, description: `Stop after this many matching lines (default ${DEFAULT_MAX}).` },
    },
    required: ["pattern"],
  },
  args,
  kind: "search",
  title: (a, ctx) => `Grep ${clip(a.pattern, 60)}${scope(a, ctx)}${a.glob ? ` (${a.glob})` : ""}`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => ({ type: "read", paths: [absPath(ctx, a.path)] }),
  async run(a, ctx) {
    let re: RegExp;
    let filter: ReturnType<typeof fileFilter>;
    try {
      re = new RegExp(a.pattern, a.ignoreCase ? "i" : "");
    } catch (err) {
      return failure(`Invalid regular expression ${JSON.stringify(a.pattern)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      filter = fileFilter(a.glob);
    } catch (err) {
      return failure(err instanceof Error ? err.message : String(err));
    }
    const root = absPath(ctx, a.path);
    const max = a.maxResults ?? DEFAULT_MAX;
    const hits: string[] = [];
    const files = new Set<string>();
    const state: WalkState = { incomplete: false };
    let more = false;
    try {
      for await (const file of walkFiles(root, { signal: ctx.signal }, state)) {
        if (more) break;
        if (filter && !filter(root, file)) continue;
        const shown = displayPath(ctx.cwd, file);
        await searchFile(file, re, (line, text) => {
          if (hits.length >= max) {
            more = true;
            return false;
          }
          hits.push(`${shown}:${line}: ${clip(text, MAX_LINE_CHARS)}`);
          files.add(file);
          return true;
        });
      }
    } catch (err) {
      return failure(fsErrorMessage(err, show(ctx.cwd, root)));
    }
    if (ctx.signal.aborted) return failure("Cancelled.");
    const notes: string[] = [];
    if (more) notes.push(`Stopped after ${max} matches; narrow the pattern, path or glob to see the rest.`);
    if (state.incomplete) notes.push("The folder is too large to search completely; results are partial.");
    let output = hits.length ? hits.join("\n") : "No matches.";
    if (notes.length) output += `\n\n[${notes.join(" ")}]`;
    return { output, content: [textContent(output)], rawOutput: { matches: hits.length, files: files.size } };
  },
});
