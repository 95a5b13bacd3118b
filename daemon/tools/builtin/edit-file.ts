import { z } from "zod";
import { defineTool, type TextEncodingName } from "../types.js";
import { absPath, failure, fsErrorMessage, plural, shownPath } from "./common.js";

const edit = z.object({
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

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Applies one edit, or says why it cannot be applied. */
function applyEdit(text: string, e: Edit, crlf: boolean): { text: string } | { error: string } {
  if (e.oldText === "") return { error: "oldText is empty; give the exact text to replace" };
  let { oldText, newText } = e;
  let count = occurrences(text, oldText);
  // Models write "\n"; a CRLF file would otherwise never match a multi-line oldText.
  if (count === 0 && crlf && oldText.includes("\n") && !oldText.includes("\r")) {
    oldText = oldText.replace(/\n/g, "\r\n");
    newText = newText.replace(/\r?\n/g, "\r\n");
    count = occurrences(text, oldText);
  }
  if (count === 0) return { error: "oldText not found (it must match exactly, including whitespace; read the file again if unsure)" };
  if (count > 1 && !e.replaceAll) {
    return { error: `ambiguous: ${count} matches for oldText; include more surrounding lines to make it unique, or set replaceAll` };
  }
  if (e.replaceAll) return { text: text.split(oldText).join(newText) };
  const at = text.indexOf(oldText);
  return { text: text.slice(0, at) + newText + text.slice(at + oldText.length) };
}

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Edit a file by exact search and replace. Each edit's oldText must occur exactly once in the file (unless replaceAll); " +
    "edits are applied in order, each to the result of the previous one, and nothing is written unless all of them apply. " +
    "Read the file first and copy oldText exactly, with enough context to be unique. " +
    "Give either edits, or oldText and newText for a single edit.",
  args,
  kind: "edit",
  title: (a, ctx) => `Edit ${shownPath(ctx, a.path)}`,
  locations: (a, ctx) => [{ path: absPath(ctx, a.path) }],
  access: (a, ctx) => ({ type: "write", paths: [absPath(ctx, a.path)] }),
  async run(a, ctx) {
    const path = absPath(ctx, a.path);
    const shown = shownPath(ctx, a.path);
    let original: string;
    let encoding: TextEncodingName;
    try {
      ({ text: original, encoding } = await ctx.files.read(path));
    } catch (err) {
      const hint = (err as { code?: unknown }).code === "ENOENT" ? " (use write_file to create a file)" : "";
      return failure(`${fsErrorMessage(err, shown)}${hint}`);
    }
    const crlf = original.includes("\r\n");
    let text = original;
    for (const [i, e] of a.edits.entries()) {
      const r = applyEdit(text, e, crlf);
      if ("error" in r) {
        const which = a.edits.length > 1 ? `Edit ${i + 1} of ${a.edits.length}` : "Edit";
        return failure(`${which} failed in ${shown}: ${r.error}. Nothing was changed.`);
      }
      text = r.text;
    }
    if (text === original) return failure(`The edits leave ${shown} unchanged (newText equals oldText).`);
    try {
      await ctx.files.write(path, text, encoding);
    } catch (err) {
      return failure(`Could not write ${shown}: ${fsErrorMessage(err, shown)}`);
    }
    return {
      output: `Applied ${plural(a.edits.length, "edit")} to ${shown}.`,
      content: [{ type: "diff", path, oldText: original, newText: text }],
    };
  },
});
