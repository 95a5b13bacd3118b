/** `reasonix sessions [--cwd DIR]`: lists sessions through the daemon, as any ACP client would. */
import { resolve } from "node:path";
import { JsonRpcPeer } from "../shared/jsonrpc.js";
import { resolvePaths } from "../shared/paths.js";
import { parseFlags } from "../shared/cli.js";
import { connectOrStart } from "./connect.js";

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
  for (const r of rows) {
    process.stdout.write(`${r.sessionId}  ${r.updatedAt ?? ""}  ${r.cwd}  ${r.title ?? ""}\n`);
  }
}
