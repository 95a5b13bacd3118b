/**
 * The processes under a stdio MCP server. The SDK ends only the process it spawned; a server
 * started through `npx`, a shell or a wrapper leaves its real process behind unless the whole tree
 * is ended. Read from /proc (Linux); elsewhere only the direct child is known.
 */
import { readdirSync, readFileSync } from "node:fs";
import { isRunning } from "../../shared/process.js";

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

/** `pid` and every process below it, parents before children. */
export function processTree(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return [pid];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    const child = Number(entry);
    const parent = parentOf(child);
    if (parent === undefined) continue;
    const list = children.get(parent) ?? [];
    list.push(child);
    children.set(parent, list);
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    out.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return out;
}

/** SIGTERM to every process of the tree, then SIGKILL to what is left after `graceMs`. */
export async function endTree(pids: readonly number[], graceMs: number): Promise<void> {
  const signal = (sig: NodeJS.Signals): void => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone already
      }
    }
  };
  signal("SIGTERM");
  const deadline = Date.now() + graceMs;
  while (pids.some(isRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  if (pids.some(isRunning)) signal("SIGKILL");
}
