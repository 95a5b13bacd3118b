/**
 * Goal mode's decisions, kept pure: after each turn, keep going, stop (with the message saying why),
 * or yield to a prompt the user sent meanwhile.
 */
import type { StopReason } from "@agentclientprotocol/sdk";

/** Goal mode: the goal the agent keeps working on, once a prompt set it (persisted with the session). */
export interface GoalState {
  text: string;
  status: "active" | "complete" | "blocked";
  turns: number;
  startedAt: string;
  summary?: string;
}

export interface GoalBounds {
  maxTurns: number;
  maxSeconds: number;
}

export const GOAL_NOTE =
  "[Reasonix] Goal mode is on: the request below is your goal. Work toward it on your own across turns. " +
  "At the end of each turn call update_goal with status continue (more to do), complete (done) or blocked " +
  "(you need the user), and a one-line summary.";

export type GoalStep = { action: "continue" } | { action: "yield" } | { action: "stop"; message: string };

export function nextGoalStep(goal: GoalState, last: StopReason, queuedPrompts: number, bounds: GoalBounds, now: number): GoalStep {
  if (last === "cancelled") return { action: "stop", message: "\n\n[goal] Stopped: cancelled by the user." };
  if (goal.status === "complete") return { action: "stop", message: `\n\n[goal] Complete${goal.summary ? `: ${goal.summary}` : "."}` };
  if (goal.status === "blocked") return { action: "stop", message: `\n\n[goal] Blocked${goal.summary ? `: ${goal.summary}` : "."} Send a prompt to continue.` };
  if (last !== "end_turn") return { action: "stop", message: `\n\n[goal] Stopped: the turn ended with ${last}.` };
  // The user's own prompt is a boundary: it runs next, and the goal goes on after it.
  if (queuedPrompts > 0) return { action: "yield" };
  const turns = goal.turns + 1;
  if (turns >= bounds.maxTurns)
    return { action: "stop", message: `\n\n[warning] Goal paused after ${turns} turns (the goal bound). Send a prompt to continue.` };
  const seconds = (now - Date.parse(goal.startedAt)) / 1000;
  if (seconds >= bounds.maxSeconds)
    return { action: "stop", message: `\n\n[warning] Goal paused after ${Math.round(seconds)} s (the goal time bound). Send a prompt to continue.` };
  return { action: "continue" };
}

export function continuationText(goal: GoalState): string {
  return `[Reasonix] Continue working toward the goal: ${goal.text}\nWhen this turn ends, report with update_goal.`;
}
