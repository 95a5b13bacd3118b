/** The fastify app as a factory: plugins registered, not listening (the caller listens). */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import websocket from "@fastify/websocket";
import { acpWebSocket, WS_MAX_PAYLOAD } from "./acp-ws.js";
import { httpRoutes } from "./http-routes.js";
import type { DaemonState } from "./state.js";

export async function buildApp(state: DaemonState): Promise<FastifyInstance> {
  const httpLog = state.services.log.child({ component: "http" });
  httpLog.level = "warn";
  const app = Fastify({ loggerInstance: httpLog as FastifyBaseLogger });
  await app.register(websocket, { options: { maxPayload: WS_MAX_PAYLOAD } });
  await app.register(acpWebSocket, { state });
  await app.register(httpRoutes, { state });
  return app;
}
