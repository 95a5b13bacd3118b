/** The fastify app as a factory: plugins registered, not listening (the caller listens). */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import websocket from "@fastify/websocket";
import { acpWebSocket, WS_MAX_PAYLOAD } from "./acp-ws.js";
import { httpRoutes } from "./http-routes.js";
import type { DaemonState } from "./state.js";
import { tcpGuard } from "./tcp-auth.js";
import { metricsRoute } from "./metrics.js";
import { MAX_UPGRADE_HEADER_BYTES } from "../../shared/wire.js";

export interface AppOptions {
  /** The loopback TCP listener: guarded by token, Host and Origin checks. */
  tcp?: { token: string; port: () => number; allowedOrigins: readonly string[] };
}

/**
 * No route declares a JSON schema (what comes in is checked with zod where it is read), so fastify's
 * Ajv and fast-json-stringify compilers are never used: without these stand-ins fastify builds both
 * at its first instance, which was most of its share of a daemon's start (and the build leaves
 * them out of the daemon's bundle). A route given a schema fails when the app is made ready.
 */
const noRouteSchemas = () => (): never => {
  throw new Error("routes here take no JSON schema: check the input with zod in the handler");
};

export async function buildApp(state: DaemonState, opts: AppOptions = {}): Promise<FastifyInstance> {
  const httpLog = state.services.log.child({ component: opts.tcp ? "tcp" : "http" });
  httpLog.level = "warn";
  // Stopping must not wait on a client's idle keep-alive or half-open upgrade.
  const app = Fastify({
    loggerInstance: httpLog as FastifyBaseLogger,
    forceCloseConnections: true,
    // The shim's upgrade carries its window's environment, which can outgrow Node's 16 KiB default.
    http: { maxHeaderSize: MAX_UPGRADE_HEADER_BYTES },
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  });
  if (opts.tcp) tcpGuard(app, opts.tcp);
  await app.register(websocket, { options: { maxPayload: WS_MAX_PAYLOAD } });
  await app.register(acpWebSocket, { state, allowedOrigins: opts.tcp?.allowedOrigins ?? [] });
  await app.register(httpRoutes, { state });
  await app.register(metricsRoute, { state });
  return app;
}
