/**
 * Changing a session's controls. Every change is recorded and sent to the other windows
 * (`config_option_update`, `current_mode_update`) and persists with the session. Mode changes reach
 * the model as a note appended to the next user message; nothing it has already seen is rewritten.
 */
import type { PermissionOption, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { clipped, RpcError } from "../../shared/jsonrpc.js";
import { resolveModelRef } from "../provider/registry.js";
import { AUTO, effortLevels } from "../provider/effort.js";
import { isPreset } from "../tools/permissions.js";
import { configOptions, isMode, providerOf } from "./controls.js";
import { GOAL_NOTE } from "../agent/goal.js";
import type { DaemonConfig } from "../config/config.js";
import type { PermissionBroker } from "../windows/permission-broker.js";
import type { SessionState } from "./session-state.js";
import type { ClientPort, SessionRecord, SessionUpdate } from "./types.js";

/** What changing a session's controls needs of it: its state, its windows, its questions. */
export interface SettingsHost {
  readonly record: Readonly<SessionRecord>;
  readonly state: Pick<SessionState, "setControls" | "addNote" | "reportGoal">;
  readonly broker: Pick<PermissionBroker, "ask">;
  config(): DaemonConfig;
  emit(update: SessionUpdate, exclude?: ClientPort): void;
  commit(): Promise<void>;
  recordDecision(toolCallId: string, outcome: string): Promise<void>;
}

const PLAN_NOTE =
  "[Reasonix] Plan mode is on. Investigate with read-only tools, then propose a plan: record the steps " +
  "with todo_write and call exit_plan_mode with the plan. File edits and commands are blocked until the user approves.";
const PLAN_OFF_NOTE = "[Reasonix] Plan mode is off: you may edit files and run commands again, within the permission preset.";

/** The note that stands for the current mode (re-stated in a compaction's summary, as it may have been summarised away). */
export function modeNote(modeId: string): string | undefined {
  return modeId === "plan" ? PLAN_NOTE : modeId === "goal" ? GOAL_NOTE : undefined;
}

function announce(session: SettingsHost, exclude: ClientPort | undefined): void {
  session.emit({ sessionUpdate: "config_option_update", configOptions: configOptions(session.record, session.config()) }, exclude);
}

export async function setMode(session: SettingsHost, modeId: string, origin: ClientPort | undefined): Promise<void> {
  if (!isMode(modeId)) throw RpcError.invalidParams(`modeId: unknown mode "${clipped(modeId)}"`);
  const previous = session.record.mode;
  if (previous === modeId) return;
  // A goal belongs to goal mode; entering it again starts from the next prompt.
  session.state.setControls({ mode: modeId, goal: undefined });
  if (modeId === "plan") session.state.addNote(PLAN_NOTE);
  else if (previous === "plan") session.state.addNote(PLAN_OFF_NOTE);
  session.emit({ sessionUpdate: "current_mode_update", currentModeId: modeId });
  announce(session, origin);
  await session.commit();
}

export async function setModel(session: SettingsHost, value: string, origin: ClientPort | undefined): Promise<void> {
  const choice = resolveModelRef(session.config(), value);
  if (!choice) throw RpcError.invalidParams(`value: unknown model "${clipped(value)}"`);
  if (choice.ref === session.record.model) return;
  const effort = effortLevels(choice.provider.name).includes(session.record.effort) ? {} : { effort: AUTO };
  session.state.setControls({ model: choice.ref, ...effort });
  announce(session, origin);
  await session.commit();
}

export async function setEffort(session: SettingsHost, value: string, origin: ClientPort | undefined): Promise<void> {
  const levels = effortLevels(providerOf(session.config(), session.record.model));
  if (!levels.includes(value)) throw RpcError.invalidParams(`value: unknown effort "${clipped(value)}"; this model takes ${levels.join(", ")}`);
  if (value === session.record.effort) return;
  session.state.setControls({ effort: value });
  announce(session, origin);
  await session.commit();
}

export async function setToolApproval(session: SettingsHost, value: string, origin: ClientPort | undefined): Promise<void> {
  if (!isPreset(value)) throw RpcError.invalidParams(`value: unknown permission preset "${clipped(value)}"`);
  if (value === session.record.toolApproval) return;
  // Applies at once, even mid-turn: the gate reads the record on every call.
  session.state.setControls({ toolApproval: value });
  announce(session, origin);
  await session.commit();
}

/** The controls a window changes (`session/set_config_option`'s ids, controls.ts). */
export type ControlId = "mode" | "model" | "effort" | "tool_approval";

export function isControlId(id: string): id is ControlId {
  return id === "mode" || id === "model" || id === "effort" || id === "tool_approval";
}

/** Changes one control; the other windows hear of it (`origin` excepted), and it persists at once. */
export function setControl(session: SettingsHost, id: ControlId, value: string, origin: ClientPort | undefined): Promise<void> {
  switch (id) {
    case "mode":
      return setMode(session, value, origin);
    case "model":
      return setModel(session, value, origin);
    case "effort":
      return setEffort(session, value, origin);
    case "tool_approval":
      return setToolApproval(session, value, origin);
  }
}

/** exit_plan_mode: the user approves the plan (back to normal mode) or keeps planning. */
export async function approvePlan(
  session: SettingsHost,
  plan: string,
  steps: string[] | undefined,
  toolCallId: string,
  signal: AbortSignal,
): Promise<"approved" | "rejected" | "not_in_plan"> {
  if (session.record.mode !== "plan") return "not_in_plan";
  if (steps && steps.length > 0) {
    session.emit({ sessionUpdate: "plan", entries: steps.map((content) => ({ content, priority: "medium", status: "pending" })) });
  }
  const toolCall: ToolCallUpdate = {
    toolCallId,
    title: "Ready to implement this plan?",
    kind: "switch_mode",
    status: "pending",
    content: [{ type: "content", content: { type: "text", text: plan } }],
  };
  const options: PermissionOption[] = [
    { optionId: "approve", name: "Yes, implement it", kind: "allow_once" },
    { optionId: "keep_planning", name: "No, keep planning", kind: "reject_once" },
  ];
  const outcome = await session.broker.ask(toolCall, options, signal);
  const approved = outcome.outcome === "selected" && outcome.optionId === "approve";
  await session.recordDecision(toolCallId, approved ? "approve" : "keep_planning");
  if (!approved) return "rejected";
  session.state.setControls({ mode: "normal" });
  session.emit({ sessionUpdate: "current_mode_update", currentModeId: "normal" });
  announce(session, undefined);
  await session.commit();
  return "approved";
}

/** update_goal: the model's progress report; complete and blocked end goal mode after the turn. */
export function reportGoal(session: SettingsHost, status: "continue" | "complete" | "blocked", summary: string): string {
  const reported = session.state.reportGoal({ summary, ...(status === "continue" ? {} : { status }) });
  if (!reported) return "No goal is active; there is nothing to report.";
  return status === "continue" ? "Noted; keep working toward the goal." : `Goal marked ${status}.`;
}
