/**
 * session/set_mode, session/set_config_option and the legacy session/set_model, with the
 * specification's compatibility rules: retired selectors are a successful no-op carrying a
 * deprecatedNotice, old aliases and values map onto the current controls, nothing retired is listed.
 */
import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import { z } from "zod";
import { clipped, RpcError } from "../../shared/jsonrpc.js";
import type { SetConfigOptionRequest, SetModeRequest } from "../../shared/acp-schemas.js";
import { isControlId } from "../sessions/index.js";
import type { AcpWindow } from "./context.js";

const ALIASES: Record<string, string> = {
  models: "model",
  reasoning_effort: "effort",
  thought_level: "effort",
  approval: "tool_approval",
  approval_mode: "tool_approval",
  tool_approval_mode: "tool_approval",
};

/** Permission values of older clients, accepted as input only. */
const LEGACY_PRESETS: Record<string, string> = { ask: "read-only", auto: "workspace-write", yolo: "danger-full-access" };

const RETIRED = new Set(["agent_preset", "work_mode", "profile", "runtime_profile", "token_mode"]);
/** Values older clients send to the retired selectors: accepted as a no-op; anything else is refused. */
const LEGACY_SELECTOR_VALUES = new Set(["off", "none", "light", "economy", "balanced", "standard", "delivery", "strict", "high"]);
const DEPRECATED_NOTICE =
  "Execution modes are retired: every request runs with adaptive standard execution. This selector is accepted for compatibility and changes nothing.";

export async function setMode(params: z.output<typeof SetModeRequest>, conn: AcpWindow): Promise<Record<string, never>> {
  const session = conn.services.sessions.requireLive(params.sessionId);
  // Legacy mode ids: `default` is normal + read-only, `auto` is normal + workspace-write.
  if (params.modeId === "default" || params.modeId === "auto") {
    await session.setControl("mode", "normal", undefined);
    await session.setControl("tool_approval", params.modeId === "default" ? "read-only" : "workspace-write", undefined);
    return {};
  }
  await session.setControl("mode", params.modeId, undefined);
  return {};
}

export async function setConfigOption(
  params: z.output<typeof SetConfigOptionRequest>,
  conn: AcpWindow,
): Promise<{ configOptions: SessionConfigOption[]; deprecatedNotice?: string; _meta?: Record<string, unknown> }> {
  const session = conn.services.sessions.requireLive(params.sessionId);
  const configId = ALIASES[params.configId] ?? params.configId;
  const list = () => session.controls().configOptions;
  if (RETIRED.has(configId) || configId === "quality_floor") {
    if (!(typeof params.value === "string" && LEGACY_SELECTOR_VALUES.has(params.value))) {
      throw RpcError.invalidParams(
        `value: unknown ${params.configId} value "${String(params.value)}"; it takes one of ${[...LEGACY_SELECTOR_VALUES].join(", ")}`,
      );
    }
    return { configOptions: list(), deprecatedNotice: DEPRECATED_NOTICE, _meta: { "reasonix.io": { deprecatedNotice: DEPRECATED_NOTICE } } };
  }
  if (typeof params.value !== "string") throw RpcError.invalidParams(`value: "${configId}" takes one of its listed values, not a boolean`);
  if (!isControlId(configId)) throw RpcError.invalidParams(`configId: unknown config option "${clipped(params.configId)}"`);
  const value = configId === "tool_approval" ? (LEGACY_PRESETS[params.value] ?? params.value) : params.value;
  await session.setControl(configId, value, conn);
  return { configOptions: list() };
}

export const SetModelRequest = z.object({ sessionId: z.string().min(1), modelId: z.string().min(1) }).passthrough();

export async function setModel(params: z.output<typeof SetModelRequest>, conn: AcpWindow): Promise<Record<string, never>> {
  const session = conn.services.sessions.requireLive(params.sessionId);
  await session.setControl("model", params.modelId, undefined);
  return {};
}
