import { z } from "zod";
import { defineTool } from "../types.js";
import { absPath, writeAccess, shownPath } from "./common.js";
import { runEdits } from "./edit-apply.js";

export const edit = z.object({
  oldText: z.string().describe("Exact text to replace, including whitespace and indentation. Must occur exactly once unless replaceAll."),
  newText: z.string().describe("Text to put in its place."),
  replaceAll: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one (default false)."),
});
type Edit = z.infer<typeof edit>;

/**
 * The `edits` list is the real form; a lone top-level oldText/newText is taken as a one-edit list.
 * "edits, or oldText+newText" is checked by the refinement: a root-level anyOf is refused by some providers.
 */
const args = z
  .object({
    path: z.string().min(1).describe("File to edit, relative to the working directory or absolute."),
    edits: z.array(edit).min(1).optional().describe("The replacements, applied in order."),
    oldText: z.string().optional().describe("Shorthand for a single edit: exact text to replace (use with newText instead of edits)."),
    newText: z.string().optional().describe("Shorthand for a single edit: the replacement text."),
    replaceAll: z.boolean().optional().describe("Shorthand for a single edit: replace every occurrence."),
  })
  .refine((a) => a.edits !== undefined || (a.oldText !== undefined && a.newText !== undefined), {
    message: "give either edits: [{oldText, newText}] or oldText and newText",
  })
  .transform((a): { path: string; edits: Edit[] } => ({
    path: a.path,
    edits: a.edits ?? [{ oldText: a.oldText!, newText: a.newText!, replaceAll: a.replaceAll }],
  }));

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Edit a file by exact search and replace. Each edit's oldText must occur exactly once in the file (unless replaceAll); " +
    "edits are applied in order, each to the result of the previous one, and nothing is written unless all of them apply. " +
    "Read the file first and copy oldText exactly, with enough context to be unique (whole lines whose whitespace differs still match, with a note). " +
    "An edit of a file that changed since you read it is refused: read it again. " +
    "Give either edits, or oldText and newText for a single edit.",
  args,
  kind: "edit",
  title: (a, ctx) => `Edit ${shownPath(ctx, a.path)}`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => writeAccess(ctx, a.path),
  run: (a, ctx) => runEdits(ctx, a.path, a.edits),
});
