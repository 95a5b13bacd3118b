import { z } from "zod";
import { defineTool } from "../types.js";
import { clip, textContent } from "./common.js";

const args = z.object({
  question: z.string().min(1).describe("The question, short and self-contained."),
  choices: z.array(z.string().min(1)).min(1).max(10).describe("The answers the user can pick from (1 to 10), each a few words."),
});

export const askUserTool = defineTool({
  name: "ask_user",
  description:
    "Ask the user a question with a fixed set of answers and wait for the choice. Use it only when you cannot " +
    "reasonably decide yourself (e.g. a real ambiguity in the request); the user may dismiss it.",
  args,
  kind: "other",
  title: (a) => `Ask: ${clip(a.question.replace(/\s+/g, " ").trim(), 80)}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    const answer = await ctx.askUser(a.question, a.choices);
    if (answer === undefined) return { output: "The user dismissed the question.", content: [textContent("Dismissed")] };
    return { output: `The user answered: ${answer}`, content: [textContent(answer)] };
  },
});
