/**
 * The sessions as the rest of the daemon meets them: the manager, the session's verbs, and the
 * names a window's side needs (the port it implements, the vendor methods sessions send on). acp/
 * imports nothing else of sessions/ (the structure test holds it to this).
 */
export { SessionManager, type ForkInput, type ListPage, type NewSessionInput } from "./manager.js";
export type { Session } from "./session.js";
export type { ControlId } from "./settings.js";
export { isControlId } from "./settings.js";
export type { OperatorStatus } from "./status.js";
export type { PruneFilter, PruneResult } from "./retention.js";
export type { SessionDeps } from "./deps.js";
export type { SessionActivity, SessionUpdate, StopReason } from "./types.js";
export { isIdle } from "./types.js";
export type { ClientCaps, ClientPort } from "../windows/port.js";
export { STATUS_UPDATE_METHOD } from "./meter.js";
export { FORM_REQUEST, SURFACE_NOTIFICATION } from "../windows/surfaces.js";
