import { z } from "zod";
import { defineTool } from "../types.js";

const args = z.object({
  plan: z.string().min(1).describe("The plan, in Markdown: what you will change and why."),
  steps: z.array(z.string().min(1)).optional().describe("Optional: the plan's steps, shown to the user as a checklist."),
});

export const exitPlanModeTool = defineTool({
  name: "exit_plan_mode",
  description:
    "In plan mode, present your finished plan to the user and ask to proceed. If the user approves, the session " +
    "leaves plan mode and you may edit files and run commands to carry the plan out; otherwise keep planning.",
  args,
  kind: "switch_mode",
  title: () => "Ready to implement?",
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    const answer = await ctx.controls.approvePlan(a.plan, a.steps, ctx.toolCallId, ctx.signal);
    switch (answer) {
      case "approved":
        return { output: "The user approved the plan. Plan mode is off: implement the plan now." };
      case "rejected":
        return { output: "The user wants to keep planning. Ask what to change, or refine the plan and call exit_plan_mode again." };
      case "not_in_plan":
        return { output: "The session is not in plan mode; go ahead within the permission preset." };
    }
  },
});
