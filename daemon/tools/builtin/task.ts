/**
 * `task`: a child agent with a fresh context answers one focused question with read-only tools and
 * returns its report. Its steps stream into this call's content while it works; what it did stays
 * in the call's final content, the transcript the user can read back (also after a replay).
 */
import { z } from "zod";
import { errorText } from "../../../shared/error-text.js";
import { defineTool } from "../types.js";
import { clip, failure, textContent } from "./common.js";

const MAX_PROMPT = 20_000;

export const taskTool = defineTool({
  name: "task",
  description:
    "Hand a focused question to a subagent with a fresh context and read-only tools (read_file, list_directory, glob, grep). " +
    "It explores on its own and returns a report; use it for searches across many files that would fill your context. " +
    "State the question and what the report must contain; it cannot see this conversation. " +
    "With allowEdits it may also write and edit files and run commands, asking the user exactly as you would.",
  args: z.object({
    prompt: z.string().min(1).max(MAX_PROMPT).describe("The question or task for the subagent, self-contained."),
    allowEdits: z.boolean().optional().describe("Also give it write_file, edit_file and run_command (default: read-only)."),
  }),
  kind: "think",
  title: (a) => `Subagent: ${clip(a.prompt.replace(/\s+/g, " ").trim(), 80)}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    if (!ctx.subagent) return failure("A subagent cannot start another subagent; answer with what you found.");
    try {
      const onProgress = (lines: readonly string[]): void => ctx.update({ content: [textContent(lines.join("\n"))] });
      const r = await ctx.subagent.run(a.prompt, ctx.signal, onProgress, { allowEdits: a.allowEdits === true });
      const transcript = [...r.transcript, "", "**Report**", r.report || "(no report)"].join("\n");
      const rawOutput = { stopReason: r.stopReason, steps: r.steps };
      if (r.stopReason === "cancelled") return { output: "The subagent was cancelled.", content: [textContent(transcript)], rawOutput, failed: true };
      const note = r.stopReason === "end_turn" ? "" : `\n\n[The subagent stopped early (${r.stopReason}); its report may be incomplete.]`;
      return { output: `${r.report || "(the subagent gave no report)"}${note}`, content: [textContent(transcript)], rawOutput };
    } catch (err) {
      return failure(`The subagent failed: ${errorText(err)}`);
    }
  },
});
