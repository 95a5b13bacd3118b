import { z } from "zod";
import { defineTool } from "../types.js";

const STATUSES = ["continue", "complete", "blocked"] as const;

const args = z.object({
  status: z.enum(STATUSES),
  summary: z.string().min(1),
});

export const updateGoalTool = defineTool({
  name: "update_goal",
  description:
    "In goal mode, report progress at the end of a turn: continue (more work remains; you will get another turn), " +
    "complete (the goal is reached) or blocked (you need the user). Outside goal mode it does nothing.",
  parameters: {
    type: "object",
    properties: {
      status: { type: "string", enum: [...STATUSES], description: "continue, complete or blocked." },
      summary: { type: "string", description: "One line: what was done, or what blocks you." },
    },
    required: ["status", "summary"],
  },
  args,
  kind: "think",
  title: (a) => `Goal: ${a.status}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    return { output: ctx.controls.reportGoal(a.status, a.summary) };
  },
});
