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
  // Attached and set up while its record is written; answered once it is on disk.
  const session = await conn.services.sessions.create(
    {
      cwd: params.cwd,
      additionalDirectories: params.additionalDirectories,
      model: startupModel(conn),
      env: conn.info.env,
      umask: conn.info.umask,
    },
    (created) => created.open(conn, { mcpServers: params.mcpServers, created: true }),
  );
  const result: NewSessionResponse = { sessionId: session.id, ...session.controls() };
  // Start notices, then the slash menu, follow the answer that carries the session.
  return new ResultThen(result, () => session.greet(conn));
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
  await session.open(conn, { mcpServers: params.mcpServers, created: true });
  const result: ForkSessionResponse = {
    sessionId: session.id,
    ...session.controls(),
    _meta: { "reasonix.io": { forkedFrom: params.sessionId, ...(messageId ? { messageId } : {}) } },
  };
  return new ResultThen(result, () => session.greet(conn));
}

export async function loadSession(params: z.output<typeof LoadSessionRequest>, conn: AcpWindow): Promise<ResultThen> {
  const session = await conn.services.sessions.get(params.sessionId);
  await session.open(conn, { mcpServers: params.mcpServers, replay: true });
  // The slash menu is the last update before the answer, so nothing of a loaded session arrives
  // after the reply until something new happens (acp-tck ACP-LOAD-002): a turn held for a window
  // goes on after it.
  session.greet(conn);
  const result: LoadSessionResponse = session.controls();
  return new ResultThen(result, () => session.loaded());
}

export async function resumeSession(params: z.output<typeof ResumeSessionRequest>, conn: AcpWindow): Promise<ResultThen> {
  const session = await conn.services.sessions.get(params.sessionId);
  await session.open(conn, { mcpServers: params.mcpServers });
  const result: LoadSessionResponse = session.controls();
  return new ResultThen(result, () => session.greet(conn));
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
