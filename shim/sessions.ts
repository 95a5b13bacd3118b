/**
 * `reasonix sessions [--cwd DIR]` lists sessions and `reasonix sessions prune …` removes them, both
 * through the daemon as any ACP client would (the daemon holds the store; only it deletes).
 */
import { resolve } from "node:path";
import { JsonRpcPeer } from "../shared/jsonrpc.js";
import { resolvePaths } from "../shared/paths.js";
import { parseFlags, UsageError } from "../shared/cli.js";
import { DURATION_HINT, parseDuration } from "../shared/duration.js";
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

interface InitializeAnswer {
  agentCapabilities?: { _meta?: { "reasonix.io"?: { sessionsPrune?: { method?: string } } } };
}

/** A peer on the daemon, initialized; `run` gets it and the initialize answer, then the socket closes. */
async function withDaemon<T>(run: (peer: JsonRpcPeer, init: InitializeAnswer) => Promise<T>): Promise<T> {
  const ws = await connectOrStart(resolvePaths(), {});
  const peer = new JsonRpcPeer((t) => ws.send(t), { request: () => ({}), notification: () => undefined });
  ws.on("message", (text) => peer.receive(text));
  try {
    const init = (await peer.request("initialize", { protocolVersion: 1, clientInfo: { name: "reasonix-cli", version: "0" } })) as InitializeAnswer;
    return await run(peer, init);
  } finally {
    ws.close();
  }
}

export async function listSessionsCommand(args: string[]): Promise<void> {
  if (args[0] === "prune") return pruneCommand(args.slice(1));
  const { values } = parseFlags(args, { cwd: { type: "string" } }, "usage: reasonix sessions [--cwd DIR]\n       reasonix sessions prune …\n");
  const cwd = values.cwd ? resolve(values.cwd) : undefined;
  const rows = await withDaemon(async (peer) => {
    let cursor: string | undefined;
    const all: Listed["sessions"] = [];
    do {
      const page = (await peer.request("session/list", { ...(cwd ? { cwd } : {}), ...(cursor ? { cursor } : {}) })) as Listed;
      all.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  });
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

const PRUNE_USAGE = `usage: reasonix sessions prune [--older-than DURATION] [--empty] [--cwd DIR] [--dry-run]
  --older-than DURATION  sessions with no activity (no turn started or ended) for that long;
                         DURATION is ${DURATION_HINT}
  --empty                sessions nobody ever prompted
  --cwd DIR              only sessions in DIR
  --dry-run              say what would be removed, remove nothing
  At least one of --older-than and --empty; given both, a session must match both. Sessions in use
  (a window attached, a turn running, queued work, a background job) are kept.
`;

interface Pruned {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt: string;
  empty: boolean;
  reason?: string;
}

const row = (s: Pruned): string =>
  `  ${s.sessionId}  ${s.updatedAt}  ${s.cwd}  ${s.title ?? (s.empty ? "(no prompt)" : "")}${s.reason ? `  (${s.reason})` : ""}\n`;
const count = (n: number): string => `${n} session${n === 1 ? "" : "s"}`;

async function pruneCommand(args: string[]): Promise<void> {
  const { values } = parseFlags(
    args,
    { "older-than": { type: "string" }, empty: { type: "boolean" }, cwd: { type: "string" }, "dry-run": { type: "boolean" } },
    PRUNE_USAGE,
  );
  const olderThan = values["older-than"];
  const olderThanMs = olderThan === undefined ? undefined : parseDuration(olderThan);
  if (olderThan !== undefined && olderThanMs === undefined) throw new UsageError(`--older-than "${olderThan}": not a duration (${DURATION_HINT})`, PRUNE_USAGE);
  if (olderThanMs === undefined && !values.empty) throw new UsageError("say which sessions to remove: --older-than DURATION, --empty, or both", PRUNE_USAGE);
  const dryRun = values["dry-run"] === true;
  const params = {
    ...(olderThanMs !== undefined ? { olderThanSeconds: olderThanMs / 1000 } : {}),
    ...(values.empty ? { empty: true } : {}),
    ...(values.cwd ? { cwd: resolve(values.cwd) } : {}),
    dryRun,
  };
  const result = await withDaemon(async (peer, init) => {
    // The name as the daemon advertises it, as a client must read it.
    const method = init.agentCapabilities?._meta?.["reasonix.io"]?.sessionsPrune?.method;
    if (!method) throw new Error("the running daemon cannot prune sessions (an older build); run `reasonix daemon stop` and try again");
    return (await peer.request(method, params)) as { removed: Pruned[]; kept: Pruned[] };
  });
  const out: string[] = [];
  if (result.removed.length === 0) out.push("no sessions to remove\n");
  else out.push(`${dryRun ? "would remove" : "removed"} ${count(result.removed.length)}:\n`, ...result.removed.map(row));
  if (result.kept.length > 0) out.push(`${dryRun ? "would keep" : "kept"} ${count(result.kept.length)} in use:\n`, ...result.kept.map(row));
  process.stdout.write(out.join(""));
}
