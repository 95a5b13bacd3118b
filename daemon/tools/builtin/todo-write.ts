import { z } from "zod";
import { defineTool, type PlanEntry } from "../types.js";

const STATUSES = ["pending", "in_progress", "completed"] as const;
const PRIORITIES = ["high", "medium", "low"] as const;

const args = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().min(1).describe("What to do, as a short imperative sentence."),
        status: z.enum(STATUSES).describe("pending, in_progress or completed."),
        priority: z.enum(PRIORITIES).optional().describe("high, medium or low (default medium)."),
      }),
    )
    .describe("The whole todo list, in order."),
});

export const todoWriteTool = defineTool({
  name: "todo_write",
  description:
    "Record the plan for a multi-step task as a todo list the user can follow. Send the complete list every time " +
    "(it replaces the previous one); keep at most one item in_progress and mark items completed as soon as they are done.",
  args,
  kind: "think",
  title: () => "Update plan",
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    const entries: PlanEntry[] = a.todos.map((t) => ({ content: t.content, status: t.status, priority: t.priority ?? "medium" }));
    ctx.setPlan(entries);
    if (!entries.length) return { output: "Plan cleared." };
    const count = (s: PlanEntry["status"]) => entries.filter((e) => e.status === s).length;
    const current = entries.find((e) => e.status === "in_progress");
    let output = `Plan updated: ${entries.length} items (${count("completed")} completed, ${count("in_progress")} in progress, ${count("pending")} pending).`;
    if (current) output += ` Current: ${current.content}`;
    return { output };
  },
});
