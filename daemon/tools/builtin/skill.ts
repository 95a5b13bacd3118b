import { z } from "zod";
import { defineTool } from "../types.js";
import { failure, textContent } from "./common.js";

const args = z.object({
  name: z.string().min(1).describe("The skill's name, as the system prompt lists it."),
});

/**
 * Loads one Agent Skill: what the prompt lists is only its name and description. Reading a skill
 * is reading files the user or the project put there for agents, so it asks nothing in any preset
 * (`access` none); where they may really lie is checked when they are read (agent/skills.ts).
 */
export const skillTool = defineTool({
  name: "skill",
  description:
    "Load a skill listed under # Skills in the system prompt: returns its instructions (SKILL.md without its front matter) and the files in its folder. " +
    "Call it when a task matches a skill's description, before you start the task, then follow the instructions; read the folder's files with read_file when they say to.",
  args,
  kind: "read",
  title: (a) => `Skill ${a.name}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    if (!ctx.skills) return failure("This session has no skills.");
    const read = await ctx.skills.read(a.name);
    if ("error" in read) return failure(read.error);
    const files = read.files.length ? read.files.map((f) => `- ${f}`) : ["(none besides SKILL.md)"];
    const output = [
      `# Skill ${read.name}`,
      `Folder: ${read.folder}`,
      "",
      read.body,
      ...(read.clipped ? ["", "[clipped: SKILL.md goes on past the part shown]"] : []),
      "",
      `Files in ${read.folder}:`,
      ...files,
      ...(read.moreFiles ? ["[… more files not listed]"] : []),
    ].join("\n");
    return { output, content: [textContent(`Loaded the skill ${read.name} (${read.files.length} file${read.files.length === 1 ? "" : "s"} beside it)`)] };
  },
});
