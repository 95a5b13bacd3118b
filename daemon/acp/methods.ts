/**
 * The method table: every ACP method this agent answers, its params schema and its handler.
 * A method not listed here is -32601 (requests) or ignored (notifications).
 */
import type { z } from "zod";
import type { RequestContext } from "../../shared/jsonrpc.js";
import * as schema from "../../shared/acp-schemas.js";
import type { AcpConnection } from "./connection.js";
import { authenticate, initialize } from "./initialize.js";
import { closeSession, deleteSession, listSessions, loadSession, newSession, resumeSession } from "./session-lifecycle.js";
import { cancel, prompt } from "./session-prompt.js";
import { setConfigOption, setMode, setModel, SetModelRequest } from "./session-config.js";

export interface RequestSpec<S extends z.ZodType = z.ZodType> {
  params: S;
  handler(params: z.output<S>, conn: AcpConnection, ctx: RequestContext): unknown;
}

export interface NotificationSpec<S extends z.ZodType = z.ZodType> {
  params: S;
  handler(params: z.output<S>, conn: AcpConnection): void;
}

const request = <S extends z.ZodType>(params: S, handler: RequestSpec<S>["handler"]): RequestSpec =>
  ({ params, handler }) as RequestSpec;
const notification = <S extends z.ZodType>(params: S, handler: NotificationSpec<S>["handler"]): NotificationSpec =>
  ({ params, handler }) as NotificationSpec;

export const requestMethods: Record<string, RequestSpec> = {
  initialize: request(schema.InitializeRequest, initialize),
  authenticate: request(schema.AuthenticateRequest, authenticate),
  "session/new": request(schema.NewSessionRequest, newSession),
  "session/load": request(schema.LoadSessionRequest, loadSession),
  "session/resume": request(schema.ResumeSessionRequest, resumeSession),
  "session/list": request(schema.ListSessionsRequest, listSessions),
  "session/close": request(schema.SessionIdRequest, closeSession),
  "session/delete": request(schema.SessionIdRequest, deleteSession),
  "session/prompt": request(schema.PromptRequest, prompt),
  "session/set_mode": request(schema.SetModeRequest, setMode),
  "session/set_config_option": request(schema.SetConfigOptionRequest, setConfigOption),
  // Legacy: older clients switch models with this; it shares the model option's path.
  "session/set_model": request(SetModelRequest, setModel),
};

export const notificationMethods: Record<string, NotificationSpec> = {
  "session/cancel": notification(schema.SessionIdRequest, cancel),
};
