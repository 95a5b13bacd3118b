/**
 * Session controls as ACP sees them: `modes` and `configOptions`. Only what works is offered.
 */
import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import type { z } from "zod";
import { RpcError } from "../../shared/jsonrpc.js";
import type { SetConfigOptionRequest, SetModeRequest } from "../../shared/acp-schemas.js";
import { listModels, resolveModelRef } from "../provider/registry.js";
import { isPreset } from "../tools/permissions.js";
import type { Session } from "../sessions/session.js";
import type { AcpConnection } from "./connection.js";
import type { AcpServices } from "./context.js";

export function modeState(session: Session): SessionModeState {
  return {
    currentModeId: session.record.mode,
    availableModes: [{ id: "normal", name: "Normal", description: "Work on the request with the tools the permission preset allows." }],
  };
}

export function configOptions(session: Session, services: AcpServices): SessionConfigOption[] {
  const models = listModels(services.config());
  const current = models.some((m) => m.ref === session.record.model)
    ? session.record.model
    : services.config().defaultModel;
  return [
    {
      id: "model",
      name: "Model",
      description: "The model that answers in this session.",
      category: "model",
      type: "select",
      currentValue: current,
      options: models.map((m) => ({ value: m.ref, name: m.model, description: `${m.provider.name} · ${m.model}` })),
    },
    {
      id: "tool_approval",
      name: "Permissions",
      description: "What the agent may do without asking.",
      category: "_permissions",
      type: "select",
      currentValue: session.record.toolApproval,
      options: [
        { value: "read-only", name: "Read only", description: "Reads run; edits and commands ask first." },
        { value: "workspace-write", name: "Workspace", description: "Edits inside the workspace run; commands and anything outside ask." },
        { value: "danger-full-access", name: "Full access", description: "Nothing asks. Use with care." },
      ],
    },
  ];
}

export function sessionControls(session: Session, services: AcpServices): {
  modes: SessionModeState;
  configOptions: SessionConfigOption[];
} {
  return { modes: modeState(session), configOptions: configOptions(session, services) };
}

export async function setMode(params: z.output<typeof SetModeRequest>, conn: AcpConnection): Promise<Record<string, never>> {
  const session = conn.services.sessions.requireLive(params.sessionId);
  if (!modeState(session).availableModes.some((m) => m.id === params.modeId)) {
    throw RpcError.invalidParams(`modeId: unknown mode "${params.modeId}"`);
  }
  session.record.mode = params.modeId;
  await session.commit();
  return {};
}

export async function setConfigOption(
  params: z.output<typeof SetConfigOptionRequest>,
  conn: AcpConnection,
): Promise<{ configOptions: SessionConfigOption[] }> {
  const session = conn.services.sessions.requireLive(params.sessionId);
  switch (params.configId) {
    case "model": {
      const choice = typeof params.value === "string" ? resolveModelRef(conn.services.config(), params.value) : undefined;
      if (!choice) throw RpcError.invalidParams(`value: unknown model "${String(params.value)}"`);
      session.record.model = choice.ref;
      await session.commit();
      break;
    }
    case "tool_approval": {
      if (typeof params.value !== "string" || !isPreset(params.value)) {
        throw RpcError.invalidParams(`value: unknown permission preset "${String(params.value)}"`);
      }
      // Applies at once, even mid-turn: the gate reads the record on every call.
      session.record.toolApproval = params.value;
      await session.commit();
      const options = configOptions(session, conn.services);
      session.emit({ sessionUpdate: "config_option_update", configOptions: options }, conn);
      return { configOptions: options };
    }
    default:
      throw RpcError.invalidParams(`configId: unknown config option "${params.configId}"`);
  }
  return { configOptions: configOptions(session, conn.services) };
}
