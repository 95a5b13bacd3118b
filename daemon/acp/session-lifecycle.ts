/**
 * session/new, load, resume, fork, list, close, delete. A connection attaches to a session; the session
 * itself belongs to the daemon and outlives the connection.
 */
import type { AcpWindow } from "./context.js";
import type { ListSessionsResponse, LoadSessionResponse, NewSessionResponse } from "@agentclientprotocol/sdk";
import type { ForkSessionResponse } from "@agentclientprotocol/sdk/unstable";
import type { z } from "zod";
import { ResultThen, RpcError } from "../../shared/jsonrpc.js";
import type {
  ForkSessionRequest,
  ListSessionsRequest,
  LoadSessionRequest,
  NewSessionRequest,
  ResumeSessionRequest,
  SessionIdRequest,
} from "../../shared/acp-schemas.js";
import { resolveModelRef } from "../provider/registry.js";
import type { Session } from "../sessions/session.js";
import { sessionControls } from "./session-config.js";

/**
 * Hosts build their slash menu from this. After new and resume it follows the answer that carries
 * the session; after load it is the last update before the answer, so nothing of a loaded session
 * arrives after the reply until something new happens (acp-tck ACP-LOAD-002).
 */
function sendAvailableCommands(session: Session, conn: AcpWindow): void {
  session.sendCommands(conn);
}

/** What the session gathered for the user while going live (sessions/notices.ts), recorded and sent to every window. */
function sayStartNotices(session: Session): void {
  const update = session.notices.take();
  if (update) session.emit(update);
}

function startupModel(conn: AcpWindow): string {
  const config = conn.services.config();
  if (conn.info.model) {
    const choice = resolveModelRef(config, conn.info.model);
    if (!choice) {
      throw RpcError.invalidParams(`model: "${conn.info.model}" (from --model) is not a configured model; run \`reasonix setup\` or fix config.json`);
    }
    return choice.ref;
  }
  return resolveModelRef(config, config.defaultModel)?.ref ?? config.defaultModel;
}

export async function newSession(params: z.output<typeof NewSessionRequest>, conn: AcpWindow): Promise<ResultThen> {
  const session = await conn.services.sessions.create({
    cwd: params.cwd,
    additionalDirectories: params.additionalDirectories,
    model: startupModel(conn),
    env: conn.info.env,
    umask: conn.info.umask,
  });
  session.attach(conn);
  session.connectMcp(params.mcpServers);
  conn.lastActive = Date.now();
  await session.refreshCommands();
  const result: NewSessionResponse = { sessionId: session.id, ...sessionControls(session, conn.services) };
  return new ResultThen(result, () => {
    sayStartNotices(session);
    sendAvailableCommands(session, conn);
  });
}

/**
 * session/fork (unstable v1): a new session with the parent's conversation, up to now or up to
 * `_meta["reasonix.io"].messageId` (sessions/fork.ts), set up for the calling window as session/new
 * sets one up: attached, its MCP servers connected, its start notices and slash menu after the
 * reply. The answer names where it came from in `_meta["reasonix.io"]` (`forkedFrom`, `messageId`).
 */
export async function forkSession(params: z.output<typeof ForkSessionRequest>, conn: AcpWindow): Promise<ResultThen> {
  const messageId = params._meta?.["reasonix.io"]?.messageId ?? undefined;
  const session = await conn.services.sessions.fork(params.sessionId, {
    cwd: params.cwd,
    additionalDirectories: params.additionalDirectories,
    env: conn.info.env,
    messageId,
  });
  session.attach(conn);
  session.connectMcp(params.mcpServers);
  conn.lastActive = Date.now();
  await session.refreshCommands();
  const result: ForkSessionResponse = {
    sessionId: session.id,
    ...sessionControls(session, conn.services),
    _meta: { "reasonix.io": { forkedFrom: params.sessionId, ...(messageId ? { messageId } : {}) } },
  };
  return new ResultThen(result, () => {
    sayStartNotices(session);
    sendAvailableCommands(session, conn);
  });
}

export async function loadSession(params: z.output<typeof LoadSessionRequest>, conn: AcpWindow): Promise<LoadSessionResponse> {
  const session = await conn.services.sessions.get(params.sessionId);
  session.adoptWindow(conn);
  // A window that loads again gets the whole history again, once.
  session.detach(conn);
  session.connectMcp(params.mcpServers);
  await session.refreshCommands();
  await session.replayTo(conn);
  conn.lastActive = Date.now();
  sayStartNotices(session);
  sendAvailableCommands(session, conn);
  return sessionControls(session, conn.services) satisfies LoadSessionResponse;
}

export async function resumeSession(params: z.output<typeof ResumeSessionRequest>, conn: AcpWindow): Promise<ResultThen> {
  const session = await conn.services.sessions.get(params.sessionId);
  session.adoptWindow(conn);
  session.connectMcp(params.mcpServers);
  await session.refreshCommands();
  session.attach(conn);
  conn.lastActive = Date.now();
  const result: LoadSessionResponse = sessionControls(session, conn.services);
  return new ResultThen(result, () => {
    sayStartNotices(session);
    sendAvailableCommands(session, conn);
  });
}

export function listSessions(params: z.output<typeof ListSessionsRequest>, conn: AcpWindow): Promise<ListSessionsResponse> {
  return conn.services.sessions.list(params.cwd ?? undefined, params.cursor ?? undefined);
}

export async function closeSession(params: z.output<typeof SessionIdRequest>, conn: AcpWindow): Promise<Record<string, never>> {
  await conn.services.sessions.close(params.sessionId, conn);
  return {};
}

export async function deleteSession(params: z.output<typeof SessionIdRequest>, conn: AcpWindow): Promise<Record<string, never>> {
  await conn.services.sessions.delete(params.sessionId);
  return {};
}
