/**
 * The Reasonix vendor extensions (`_reasonix.io/...`): steering, the durable inbox, runtime reload and
 * session status. Clients find the method names under `agentCapabilities._meta["reasonix.io"]`;
 * errors follow the specification: an unknown session is -32602 here, inbox refusals are -32600.
 */
import type { AcpWindow } from "./context.js";
import { z } from "zod";
import { ErrorCode, RpcError } from "../../shared/jsonrpc.js";
import { INTERACTION_METHOD } from "../mcp/interaction.js";
import { ContentBlock } from "../../shared/acp-schemas.js";
import { FORM_REQUEST, type Session, STATUS_UPDATE_METHOD, SURFACE_NOTIFICATION } from "../sessions/index.js";

export const EXT = "_reasonix.io";
export const STEER_METHOD = `${EXT}/session/steer`;
export const RELOAD_METHOD = `${EXT}/session/reloadExtensions`;
export const STATUS_METHOD = `${EXT}/session/status`;
export const PRUNE_METHOD = `${EXT}/sessions/prune`;
export const STATUS_UPDATE = STATUS_UPDATE_METHOD;
export const INBOX_METHODS = {
  enqueue: `${EXT}/session/inbox/enqueue`,
  list: `${EXT}/session/inbox/list`,
  get: `${EXT}/session/inbox/get`,
  update: `${EXT}/session/inbox/update`,
  delete: `${EXT}/session/inbox/delete`,
  move: `${EXT}/session/inbox/move`,
  setPaused: `${EXT}/session/inbox/setPaused`,
  retry: `${EXT}/session/inbox/retry`,
  refresh: `${EXT}/session/inbox/refresh`,
} as const;

/** What initialize advertises: every name a client needs, so none is hard-coded on its side. */
export function reasonixCapabilities(): Record<string, unknown> {
  return {
    "reasonix.io": {
      sessionSteer: { method: STEER_METHOD },
      sessionInbox: { schemaVersion: 1, methods: INBOX_METHODS },
      sessionReloadExtensions: { method: RELOAD_METHOD },
      extensionSurface: { supported: true, schemaVersion: 1, notification: SURFACE_NOTIFICATION, formRequest: FORM_REQUEST },
      sessionStatus: { method: STATUS_METHOD, notification: STATUS_UPDATE, schemaVersion: 1 },
      mcpInteraction: { supported: true, schemaVersion: 1, method: INTERACTION_METHOD },
      sessionsPrune: { method: PRUNE_METHOD, schemaVersion: 1 },
    },
    [STATUS_METHOD]: { schemaVersion: 1 },
    [STATUS_UPDATE]: { schemaVersion: 1 },
  };
}

const sid = z.string().min(1, "sessionId must not be empty");
const itemId = z.string().min(1, "itemId must not be empty");

/** Vendor methods name an unknown session -32602, as the specification's table says. */
async function sessionFor(conn: AcpWindow, sessionId: string): Promise<Session> {
  try {
    return await conn.services.sessions.get(sessionId);
  } catch (err) {
    if (err instanceof RpcError && err.code === ErrorCode.ResourceNotFound) throw RpcError.of("VendorUnknownSession", sessionId, { sessionId });
    throw err;
  }
}

export const SteerRequest = z.object({ sessionId: sid, prompt: z.array(ContentBlock) }).passthrough();

export async function steer(params: z.output<typeof SteerRequest>, conn: AcpWindow): Promise<{ itemId: string; disposition: string }> {
  return (await sessionFor(conn, params.sessionId)).steer(params.prompt);
}

export const EnqueueRequest = z
  .object({
    sessionId: sid,
    text: z.string(),
    intent: z.enum(["followup", "steer"]).default("followup"),
    idempotencyKey: z.string().min(1).max(200).optional(),
  })
  .passthrough();

export async function inboxEnqueue(params: z.output<typeof EnqueueRequest>, conn: AcpWindow): Promise<object> {
  const session = await sessionFor(conn, params.sessionId);
  const { item, disposition, idempotent, position, paused } = await session.enqueue(params.text, params.intent, params.idempotencyKey);
  return { itemId: item.id, disposition, position, paused, idempotent };
}

export const SessionOnly = z.object({ sessionId: sid }).passthrough();
export const ItemRequest = z.object({ sessionId: sid, itemId }).passthrough();
export const UpdateRequest = z.object({ sessionId: sid, itemId, text: z.string() }).passthrough();
export const MoveRequest = z.object({ sessionId: sid, itemId, toIndex: z.number().int() }).passthrough();
export const PausedRequest = z.object({ sessionId: sid, paused: z.boolean() }).passthrough();

export async function inboxList(params: z.output<typeof SessionOnly>, conn: AcpWindow): Promise<object> {
  return (await sessionFor(conn, params.sessionId)).listInbox();
}

export async function inboxGet(params: z.output<typeof ItemRequest>, conn: AcpWindow): Promise<object> {
  const { meta, item } = (await sessionFor(conn, params.sessionId)).inboxItem(params.itemId);
  return {
    meta,
    envelope: { text: item.text, intent: item.intent, source: item.source, ...(item.idempotencyKey ? { idempotencyKey: item.idempotencyKey } : {}) },
  };
}

export async function inboxUpdate(params: z.output<typeof UpdateRequest>, conn: AcpWindow): Promise<object> {
  return (await sessionFor(conn, params.sessionId)).updateInboxItem(params.itemId, params.text);
}

export async function inboxDelete(params: z.output<typeof ItemRequest>, conn: AcpWindow): Promise<object> {
  await (await sessionFor(conn, params.sessionId)).deleteInboxItem(params.itemId);
  return { ok: true };
}

export async function inboxMove(params: z.output<typeof MoveRequest>, conn: AcpWindow): Promise<object> {
  await (await sessionFor(conn, params.sessionId)).moveInboxItem(params.itemId, params.toIndex);
  return { ok: true };
}

export async function inboxSetPaused(params: z.output<typeof PausedRequest>, conn: AcpWindow): Promise<object> {
  return { paused: await (await sessionFor(conn, params.sessionId)).setInboxPaused(params.paused) };
}

export async function inboxRetry(params: z.output<typeof ItemRequest>, conn: AcpWindow): Promise<object> {
  await (await sessionFor(conn, params.sessionId)).retryInboxItem(params.itemId);
  return { ok: true };
}

/** Items hold plain text with no frozen references, so a refresh only confirms the item is pending. */
export async function inboxRefresh(params: z.output<typeof ItemRequest>, conn: AcpWindow): Promise<object> {
  (await sessionFor(conn, params.sessionId)).refreshInboxItem(params.itemId);
  return { ok: true };
}

export async function reloadExtensions(params: z.output<typeof SessionOnly>, conn: AcpWindow): Promise<object> {
  // The notice is recorded like a command's answer, so every window (and a later load) shows it.
  return (await sessionFor(conn, params.sessionId)).reloadExtensions();
}

export const PruneRequest = z
  .object({
    olderThanSeconds: z.number().positive().optional(),
    empty: z.boolean().optional(),
    cwd: z.string().min(1).optional(),
    dryRun: z.boolean().default(false),
  })
  .passthrough()
  .refine((p) => p.olderThanSeconds !== undefined || p.empty === true, {
    message: "name the sessions to remove: olderThanSeconds, empty: true, or both",
    path: ["olderThanSeconds"],
  });

/**
 * Removes the sessions both filters name (older than, and never prompted), as session/delete does;
 * a session in use is kept and listed with the reason (sessions/retention.ts).
 */
export async function sessionsPrune(params: z.output<typeof PruneRequest>, conn: AcpWindow): Promise<object> {
  const filter = { olderThanMs: params.olderThanSeconds === undefined ? undefined : params.olderThanSeconds * 1000, empty: params.empty, cwd: params.cwd };
  const result = await conn.services.sessions.prune(filter, params.dryRun);
  if (!params.dryRun && result.removed.length > 0) {
    conn.log.info(
      { removed: result.removed.map((s) => s.sessionId), kept: result.kept.length, olderThanSeconds: params.olderThanSeconds, empty: params.empty },
      "pruned sessions",
    );
  }
  return result;
}

export async function sessionStatus(params: z.output<typeof SessionOnly>, conn: AcpWindow): Promise<object> {
  return (await sessionFor(conn, params.sessionId)).statusSnapshot();
}
