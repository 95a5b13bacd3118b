/**
 * Session controls as ACP shows them: `modes` and the `configOptions` list (mode, model, effort,
 * permissions), built from a session's record. Only what works is offered; legacy selectors are
 * accepted elsewhere but never listed here.
 */
import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import type { DaemonConfig } from "../config/config.js";
import { listModels, resolveModelRef } from "../provider/registry.js";
import { AUTO, effortLevels, effortName } from "../provider/effort.js";
import type { SessionRecord } from "./types.js";

export const MODES = [
  { id: "normal", name: "Normal", description: "Work on the request with the tools the permission preset allows." },
  { id: "plan", name: "Plan", description: "Investigate and propose a plan; edits and commands wait for your approval." },
  { id: "goal", name: "Goal", description: "The next prompt becomes a goal the agent keeps working on until it is done." },
] as const;

export type ModeId = (typeof MODES)[number]["id"];

export function isMode(v: string): v is ModeId {
  return MODES.some((m) => m.id === v);
}

export const PRESET_OPTIONS = [
  { value: "read-only", name: "Read only", description: "Reads run; edits and commands ask first." },
  { value: "workspace-write", name: "Workspace", description: "Edits inside the workspace run; commands and anything outside ask." },
  { value: "danger-full-access", name: "Full access", description: "Nothing asks. Use with care." },
];

export function modeState(record: SessionRecord): SessionModeState {
  return { currentModeId: record.mode, availableModes: MODES.map((m) => ({ ...m })) };
}

export function providerOf(config: DaemonConfig, ref: string): string {
  return resolveModelRef(config, ref)?.provider.name ?? "deepseek";
}

export function configOptions(record: SessionRecord, config: DaemonConfig): SessionConfigOption[] {
  const models = listModels(config);
  const levels = effortLevels(providerOf(config, record.model));
  const modelOptions = models.map((m) => ({ value: m.ref, name: m.model, description: `${m.provider.name} · ${m.model}` }));
  // A session whose model left the configuration still shows it, so the list has its current value.
  if (!models.some((m) => m.ref === record.model))
    modelOptions.push({ value: record.model, name: record.model, description: "not in the current configuration" });
  return [
    {
      id: "mode",
      name: "Mode",
      description: "How the agent works: normal, plan first, or keep going toward a goal.",
      category: "mode",
      type: "select",
      currentValue: record.mode,
      options: MODES.map((m) => ({ value: m.id, name: m.name, description: m.description })),
    },
    {
      id: "model",
      name: "Model",
      description: "The model that answers in this session.",
      category: "model",
      type: "select",
      currentValue: record.model,
      options: modelOptions,
    },
    {
      id: "effort",
      name: "Effort",
      description: "How hard the model thinks before answering; Auto leaves the provider's default.",
      category: "thought_level",
      type: "select",
      currentValue: levels.includes(record.effort) ? record.effort : AUTO,
      options: levels.map((l) => ({ value: l, name: effortName(l) })),
    },
    {
      id: "tool_approval",
      name: "Permissions",
      description: "What the agent may do without asking.",
      category: "_permissions",
      type: "select",
      currentValue: record.toolApproval,
      options: PRESET_OPTIONS,
    },
  ];
}
