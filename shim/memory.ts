/**
 * What the shim remembers of the editor's conversation with the daemon, so that if the daemon comes
 * back (restarted by systemd, say) the shim can reconnect as the same window: the editor's
 * `initialize`, and the sessions it has open. Prompts are never remembered, never re-sent.
 */
import { ExactId, type JsonRpcId, rawTopLevelId } from "../shared/jsonrpc.js";

interface PendingRequest {
  id: JsonRpcId;
  method: string;
  sessionId?: string;
  cwd?: string;
  mcpServers?: unknown[];
}

export const keyOf = (id: JsonRpcId): string => (id instanceof ExactId ? id.text : JSON.stringify(id));

/**
 * The message's id as the line wrote it: a number JavaScript would round (18446744073709551617)
 * becomes its JSON text, so the shim's own answers echo it exactly and answers from the daemon,
 * which echo it exactly too, settle the same request.
 */
export function exactId(id: JsonRpcId, line: string): JsonRpcId {
  if (typeof id !== "number" || Number.isSafeInteger(id)) return id;
  const raw = rawTopLevelId(line);
  return raw !== undefined && String(id) !== raw ? new ExactId(raw) : id;
}

/** Requests the shim sends on its own carry ids the editor never uses; their answers stay here. */
export const PRIVATE_ID_PREFIX = "__reasonix_shim_";

export class ShimMemory {
  initializeLine: string | undefined;
  readonly pending = new Map<string, PendingRequest>();
  readonly sessions = new Map<string, { cwd: string; mcpServers: unknown[] }>();

  /** An editor line on its way to the daemon. */
  fromEditor(line: string): void {
    if (!line.includes('"method"') || !line.includes('"id"')) return;
    try {
      const msg = JSON.parse(line) as { id?: JsonRpcId; method?: unknown; params?: { sessionId?: unknown; cwd?: unknown; mcpServers?: unknown } };
      if (!msg || typeof msg !== "object" || typeof msg.method !== "string" || msg.id === undefined) return;
      const p = msg.params ?? {};
      const id = exactId(msg.id, line);
      this.pending.set(keyOf(id), {
        id,
        method: msg.method,
        ...(typeof p.sessionId === "string" ? { sessionId: p.sessionId } : {}),
        ...(typeof p.cwd === "string" ? { cwd: p.cwd } : {}),
        ...(Array.isArray(p.mcpServers) ? { mcpServers: p.mcpServers } : {}),
      });
      if (msg.method === "initialize" && !this.initializeLine) this.initializeLine = line;
    } catch {
      // not JSON: the daemon answers -32700
    }
  }

  /** An answer from the daemon: settles the request and notes sessions opened or closed. */
  answer(msg: { id?: JsonRpcId; result?: { sessionId?: unknown }; error?: unknown }, text = ""): void {
    if (msg.id === undefined) return;
    const key = keyOf(exactId(msg.id, text));
    const req = this.pending.get(key);
    if (!req) return;
    this.pending.delete(key);
    if (msg.error !== undefined) return;
    if (req.method === "session/new" && typeof msg.result?.sessionId === "string" && req.cwd) {
      this.sessions.set(msg.result.sessionId, { cwd: req.cwd, mcpServers: req.mcpServers ?? [] });
    } else if ((req.method === "session/load" || req.method === "session/resume") && req.sessionId && req.cwd) {
      this.sessions.set(req.sessionId, { cwd: req.cwd, mcpServers: req.mcpServers ?? [] });
    } else if ((req.method === "session/close" || req.method === "session/delete") && req.sessionId) {
      this.sessions.delete(req.sessionId);
    }
  }

  /** Requests still unanswered that answer quickly (everything but a prompt, which runs a turn). */
  quickPending(): boolean {
    for (const r of this.pending.values()) if (r.method !== "session/prompt") return true;
    return false;
  }

  /** Every unanswered editor request, taken: the lost daemon will never answer them. */
  takePending(): JsonRpcId[] {
    const ids = [...this.pending.values()].map((r) => r.id);
    this.pending.clear();
    return ids;
  }

  /** The lines that make a new connection this window again: initialize, then resume each session. */
  rejoinLines(): string[] {
    const lines: string[] = [];
    if (this.initializeLine) {
      const init = JSON.parse(this.initializeLine) as Record<string, unknown>;
      lines.push(JSON.stringify({ ...init, id: `${PRIVATE_ID_PREFIX}initialize` }));
    }
    for (const [sessionId, { cwd, mcpServers }] of this.sessions) {
      lines.push(
        JSON.stringify({ jsonrpc: "2.0", id: `${PRIVATE_ID_PREFIX}resume_${sessionId}`, method: "session/resume", params: { sessionId, cwd, mcpServers } }),
      );
    }
    return lines;
  }
}
