/**
 * The method table: every ACP method this agent answers, its params schema and its handler.
 * A method not listed here is -32601 (requests) or ignored (notifications).
 */
import type { AcpWindow } from "./context.js";
import type { z } from "zod";
import type { RequestContext } from "../../shared/jsonrpc.js";
import * as schema from "../../shared/acp-schemas.js";
import { authenticate, initialize, logout } from "./initialize.js";
import { closeSession, deleteSession, forkSession, listSessions, loadSession, newSession, resumeSession } from "./session-lifecycle.js";
import { cancel, prompt } from "./session-prompt.js";
import { setConfigOption, setMode, setModel, SetModelRequest } from "./session-config.js";
import * as ext from "./reasonix-ext.js";

export interface RequestSpec<S extends z.ZodType = z.ZodType> {
  params: S;
  handler(params: z.output<S>, conn: AcpWindow, ctx: RequestContext): unknown;
  /**
   * The user acts in their window through it (prompt, cancel, a setting, opening a session): the
   * connection records the activity when it dispatches, and editor requests go to the latest
   * active window (windows/editor-router.ts).
   */
  acts?: boolean;
}

export interface NotificationSpec<S extends z.ZodType = z.ZodType> {
  params: S;
  handler(params: z.output<S>, conn: AcpWindow): void;
  acts?: boolean;
}

const request = <S extends z.ZodType>(params: S, handler: RequestSpec<S>["handler"], acts = false): RequestSpec => ({ params, handler, acts }) as RequestSpec;
const notification = <S extends z.ZodType>(params: S, handler: NotificationSpec<S>["handler"], acts = false): NotificationSpec =>
  ({ params, handler, acts }) as NotificationSpec;
/** Marks a method through which the user acts (see `RequestSpec.acts`). */
const ACTS = true;

export const requestMethods: Record<string, RequestSpec> = {
  initialize: request(schema.InitializeRequest, initialize),
  authenticate: request(schema.AuthenticateRequest, authenticate),
  logout: request(schema.LogoutRequest, logout),
  "session/new": request(schema.NewSessionRequest, newSession, ACTS),
  "session/load": request(schema.LoadSessionRequest, loadSession, ACTS),
  "session/resume": request(schema.ResumeSessionRequest, resumeSession, ACTS),
  // Unstable v1 (advertised as sessionCapabilities.fork).
  "session/fork": request(schema.ForkSessionRequest, forkSession, ACTS),
  "session/list": request(schema.ListSessionsRequest, listSessions),
  "session/close": request(schema.SessionIdRequest, closeSession),
  "session/delete": request(schema.SessionIdRequest, deleteSession),
  "session/prompt": request(schema.PromptRequest, prompt, ACTS),
  "session/set_mode": request(schema.SetModeRequest, setMode, ACTS),
  "session/set_config_option": request(schema.SetConfigOptionRequest, setConfigOption, ACTS),
  // Legacy: older clients switch models with this; it shares the model option's path.
  "session/set_model": request(SetModelRequest, setModel),
  // Reasonix extensions, advertised under agentCapabilities._meta["reasonix.io"].
  [ext.STEER_METHOD]: request(ext.SteerRequest, ext.steer, ACTS),
  [ext.INBOX_METHODS.enqueue]: request(ext.EnqueueRequest, ext.inboxEnqueue),
  [ext.INBOX_METHODS.list]: request(ext.SessionOnly, ext.inboxList),
  [ext.INBOX_METHODS.get]: request(ext.ItemRequest, ext.inboxGet),
  [ext.INBOX_METHODS.update]: request(ext.UpdateRequest, ext.inboxUpdate),
  [ext.INBOX_METHODS.delete]: request(ext.ItemRequest, ext.inboxDelete),
  [ext.INBOX_METHODS.move]: request(ext.MoveRequest, ext.inboxMove),
  [ext.INBOX_METHODS.setPaused]: request(ext.PausedRequest, ext.inboxSetPaused),
  [ext.INBOX_METHODS.retry]: request(ext.ItemRequest, ext.inboxRetry),
  [ext.INBOX_METHODS.refresh]: request(ext.ItemRequest, ext.inboxRefresh),
  [ext.RELOAD_METHOD]: request(ext.SessionOnly, ext.reloadExtensions),
  [ext.STATUS_METHOD]: request(ext.SessionOnly, ext.sessionStatus),
  [ext.PRUNE_METHOD]: request(ext.PruneRequest, ext.sessionsPrune),
};

export const notificationMethods: Record<string, NotificationSpec> = {
  "session/cancel": notification(schema.SessionIdRequest, cancel, ACTS),
};
