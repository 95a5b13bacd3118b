/**
 * Session controls as ACP sees them: `modes` and `configOptions`. Only what works is offered.
 */
import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import type { z } from "zod";
import { RpcError } from "../../shared/jsonrpc.js";
import type { SetConfigOptionRequest, SetModeRequest } from "../../shared/acp-schemas.js";
import { listModels, resolveModelRef } from "../provider/registry.js";
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
    default:
      throw RpcError.invalidParams(`configId: unknown config option "${params.configId}"`);
  }
  return { configOptions: configOptions(session, conn.services) };
}
