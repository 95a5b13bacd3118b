import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { defineTool } from "../types.js";
import { absPath, failure, fsErrorMessage, shownPath, textContent } from "./common.js";

const MAX_ENTRIES = 1000;

const args = z.object({
  path: z.string().optional().describe("Folder to list, relative to the working directory or absolute (default: the working directory)."),
});

async function isDir(e: Dirent, full: string): Promise<boolean> {
  if (e.isDirectory()) return true;
  if (!e.isSymbolicLink()) return false;
  try {
    return (await stat(full)).isDirectory();
  } catch {
    return false;
  }
}

export const listDirectoryTool = defineTool({
  name: "list_directory",
  description:
    'List the entries of one folder (not recursive), sorted by name; folders end with "/". ' + "Use glob to find files by name pattern across folders.",
  args,
  kind: "read",
  title: (a, ctx) => `List ${shownPath(ctx, a.path)}`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => ({ type: "read", paths: [absPath(ctx, a.path)] }),
  async run(a, ctx) {
    const dir = absPath(ctx, a.path);
    const shown = shownPath(ctx, a.path);
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      return failure(fsErrorMessage(err, shown));
    }
    entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    const names: string[] = [];
    for (const e of entries.slice(0, MAX_ENTRIES)) names.push((await isDir(e, join(dir, e.name))) ? `${e.name}/` : e.name);
    let output = names.length ? names.join("\n") : `${shown} is empty.`;
    if (entries.length > MAX_ENTRIES) output += `\n\n[${entries.length - MAX_ENTRIES} more entries not shown; use glob to narrow down.]`;
    return { output, content: [textContent(output)], rawOutput: { count: entries.length } };
  },
});
