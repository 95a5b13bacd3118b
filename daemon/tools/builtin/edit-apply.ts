/**
 * What edit_file and multi_edit share: read the file (through the editor's buffer when it offers
 * one), refuse it when it changed since the model read it, apply every edit in memory in order,
 * and write once, in the file's own encoding and line endings, only when all of them applied.
 */
import type { ToolContext, ToolResult } from "../types.js";
import type { TextEncodingName } from "../text-encoding.js";
import { staleMessage } from "../file-snapshots.js";
import { absPath, failure, fsErrorMessage, plural, shownPath } from "./common.js";
import { applyEdit, type Edit } from "./edit-match.js";

export async function runEdits(ctx: ToolContext, pathArg: string, edits: readonly Edit[]): Promise<ToolResult> {
  const path = absPath(ctx, pathArg);
  const shown = shownPath(ctx, pathArg);
  let original: string;
  let encoding: TextEncodingName;
  try {
    ({ text: original, encoding } = await ctx.files.read(path));
  } catch (err) {
    const hint = (err as { code?: unknown }).code === "ENOENT" ? " (use write_file to create a file)" : "";
    return failure(`${fsErrorMessage(err, shown)}${hint}`);
  }
  if (ctx.snapshots.isStale(path, original)) return failure(staleMessage(shown));
  const crlf = original.includes("\r\n");
  let text = original;
  const notes: string[] = [];
  for (const [i, e] of edits.entries()) {
    const which = edits.length > 1 ? `Edit ${i + 1} of ${edits.length}` : "Edit";
    const r = applyEdit(text, e, crlf);
    if ("error" in r) return failure(`${which} failed in ${shown}: ${r.error}. Nothing was changed.`);
    if (r.note) notes.push(`${which}: ${r.note}.`);
    text = r.text;
  }
  if (text === original) return failure(`The edits leave ${shown} unchanged (newText equals oldText).`);
  try {
    await ctx.files.write(path, text, encoding);
  } catch (err) {
    return failure(`Could not write ${shown}: ${fsErrorMessage(err, shown)}`);
  }
  ctx.snapshots.remember(path, text);
  return {
    output: [`Applied ${plural(edits.length, "edit")} to ${shown}.`, ...notes].join("\n"),
    content: [{ type: "diff", path, oldText: original, newText: text }],
  };
}
