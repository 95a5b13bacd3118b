import { z } from "zod";
import { defineTool } from "../types.js";

const STATUSES = ["continue", "complete", "blocked"] as const;

const args = z.object({
  status: z.enum(STATUSES).describe("continue, complete or blocked."),
  summary: z.string().min(1).describe("One line: what was done, or what blocks you."),
});

export const updateGoalTool = defineTool({
  name: "update_goal",
  description:
    "In goal mode, report progress at the end of a turn: continue (more work remains; you will get another turn), " +
    "complete (the goal is reached) or blocked (you need the user). Outside goal mode it does nothing.",
  args,
  kind: "think",
  title: (a) => `Goal: ${a.status}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    return { output: ctx.controls.reportGoal(a.status, a.summary) };
  },
});
