import { z } from "zod";
import { defineTool, type TextEncodingName } from "../types.js";
import { staleMessage } from "../file-snapshots.js";
import { encodingLabel, fitsEncoding } from "../text-encoding.js";
import { absPath, writeAccess, failure, fsErrorMessage, plural, shownPath } from "./common.js";

const args = z.object({
  path: z.string().min(1).describe("File to write, relative to the working directory or absolute."),
  content: z.string().describe("The complete new content of the file."),
});

export function countLines(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

export const writeFileTool = defineTool({
  name: "write_file",
  description: "Create a file, or replace a file's whole content. Creates missing parent folders. " + "To change part of an existing file, prefer edit_file.",
  args,
  kind: "edit",
  title: (a, ctx) => `Write ${shownPath(ctx, a.path)}`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => writeAccess(ctx, a.path),
  async run(a, ctx) {
    const path = absPath(ctx, a.path);
    const shown = shownPath(ctx, a.path);
    let oldText: string | null = null;
    let encoding: TextEncodingName | undefined;
    const existed = await ctx.files.exists(path);
    if (existed) {
      try {
        ({ text: oldText, encoding } = await ctx.files.read(path));
      } catch (err) {
        // A binary or unreadable file is replaced wholesale; there is just no old text to show.
        if ((err as { code?: unknown }).code === "EISDIR") return failure(fsErrorMessage(err, shown));
      }
    }
    if (oldText !== null && ctx.snapshots.isStale(path, oldText)) return failure(staleMessage(shown));
    let note = "";
    if (encoding !== undefined && !fitsEncoding(a.content, encoding)) {
      // The whole content is new, so moving to UTF-8 loses nothing the model meant to keep.
      note = ` (as UTF-8: the new content has characters ${encodingLabel(encoding)} cannot hold)`;
      encoding = "utf8";
    }
    try {
      await ctx.files.write(path, a.content, encoding);
    } catch (err) {
      return failure(`Could not write ${shown}: ${fsErrorMessage(err, shown)}`);
    }
    ctx.snapshots.remember(path, a.content);
    const verb = existed ? "Wrote" : "Created";
    return {
      output: `${verb} ${shown} (${plural(countLines(a.content), "line")})${note}.`,
      content: [{ type: "diff", path, oldText, newText: a.content }],
    };
  },
});
