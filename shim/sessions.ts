/** `reasonix sessions [--cwd DIR]`: lists sessions through the daemon, as any ACP client would. */
import { resolve } from "node:path";
import { JsonRpcPeer } from "../shared/jsonrpc.js";
import { resolvePaths } from "../shared/paths.js";
import { parseFlags } from "../shared/cli.js";
import { connectOrStart } from "./connect.js";
import { httpOverSocket } from "./daemon-process.js";

interface LiveSession {
  sessionId: string;
  status: string;
  running: boolean;
  /** The turn waits for a window (none attached) before a change or a model request. */
  held?: { since: string; before: string; until: string } | null;
  attachments: number;
  pendingPermissions: unknown[];
  inbox?: { depth: number };
}

/** What a session is doing now: live sessions from /status, the rest from their stored state. */
function stateOf(live: LiveSession | undefined): string {
  if (!live) return "stored";
  if (live.held) return "held (waiting for a window)";
  if (live.pendingPermissions.length > 0) return "waiting for permission";
  if (live.running) return "running";
  if (live.status === "interrupted") return "interrupted";
  return "idle";
}

interface Listed {
  sessions: Array<{ sessionId: string; cwd: string; title?: string; updatedAt?: string }>;
  nextCursor?: string;
}

export async function listSessionsCommand(args: string[]): Promise<void> {
  const { values } = parseFlags(args, { cwd: { type: "string" } }, "usage: reasonix sessions [--cwd DIR]\n");
  const cwd = values.cwd ? resolve(values.cwd) : undefined;
  const ws = await connectOrStart(resolvePaths(), {});
  const peer = new JsonRpcPeer((t) => ws.send(t), { request: () => ({}), notification: () => undefined });
  ws.on("message", (text) => peer.receive(text));
  await peer.request("initialize", { protocolVersion: 1, clientInfo: { name: "reasonix-cli", version: "0" } });
  let cursor: string | undefined;
  const rows: Listed["sessions"] = [];
  do {
    const page = (await peer.request("session/list", { ...(cwd ? { cwd } : {}), ...(cursor ? { cursor } : {}) })) as Listed;
    rows.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor);
  ws.close();
  if (rows.length === 0) {
    process.stdout.write("no sessions\n");
    return;
  }
  const paths = resolvePaths();
  const status = await httpOverSocket(paths, "GET", "/status").then(
    (r) => JSON.parse(r.body) as { liveSessions?: LiveSession[] },
    () => ({ liveSessions: [] as LiveSession[] }),
  );
  const live = new Map((status.liveSessions ?? []).map((s) => [s.sessionId, s]));
  for (const r of rows) {
    const l = live.get(r.sessionId);
    const windows = l ? `${l.attachments} window${l.attachments === 1 ? "" : "s"}` : "";
    process.stdout.write(`${r.sessionId}  ${stateOf(l).padEnd(27)}  ${windows.padEnd(9)}  ${r.updatedAt ?? ""}  ${r.cwd}  ${r.title ?? ""}\n`);
  }
}
