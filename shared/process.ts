import { readFileSync } from "node:fs";

/**
 * Alive and not a zombie: a process whose parent has not reaped it yet (a daemon a shim started,
 * an MCP server that just exited) answers kill(pid, 0) but is gone for every purpose here.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const end = stat.lastIndexOf(")");
    const state = stat.slice(end + 2, end + 3);
    // Z: exited, not yet reaped; X: being torn down.
    return state !== "Z" && state !== "X";
  } catch {
    return true;
  }
}
