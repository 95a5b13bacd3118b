import { z } from "zod";
import { defineTool } from "../types.js";
import { absPath, writeAccess, shownPath } from "./common.js";
import { runEdits } from "./edit-apply.js";
import { edit } from "./edit-file.js";

const args = z.object({
  path: z.string().min(1).describe("File to edit, relative to the working directory or absolute."),
  edits: z.array(edit).min(1).describe("The replacements, applied in memory in this order, each to the result of the previous one."),
});

export const multiEditTool = defineTool({
  name: "multi_edit",
  description:
    "Make several search-and-replace edits to one file at once, all or nothing: the edits are applied in memory in order " +
    "and the file is written only if every one of them applies; a failure names the edit by its number and changes nothing. " +
    "Each oldText must occur exactly once in the file as it is after the edits before it (unless replaceAll). " +
    "Read the file first; an edit of a file that changed since you read it is refused.",
  args,
  kind: "edit",
  title: (a, ctx) => `Edit ${shownPath(ctx, a.path)} (${a.edits.length} ${a.edits.length === 1 ? "change" : "changes"})`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => writeAccess(ctx, a.path),
  run: (a, ctx) => runEdits(ctx, a.path, a.edits),
});
