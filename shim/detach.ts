/**
 * Starts a process fully detached from whoever launched it: its own session and process group
 * (sid == pgid == its pid) and re-parented away from the launcher through a short intermediate
 * process that exits at once. An ACP client that, on exit, kills every descendant of the agent it
 * launched and the agent's process group (acpx does) can then never reach the daemon.
 *
 * Two ways, both kept working and tested: `setsid -f` from util-linux (it forks, the child calls
 * setsid() and execs; the parent exits), or, where there is no setsid (macOS), a tiny node
 * intermediate that spawns the target `detached: true` with the same stdio and exits. Either way
 * the target inherits the launcher's fds 0–3, so a ready pipe on fd 3 reaches it, and the
 * launcher learns of the target's death from EOF on that pipe, not from a child's exit.
 */
import { existsSync } from "node:fs";
import type { ChildProcess, StdioOptions } from "node:child_process";

export type DetachStrategy = "setsid" | "node";

const SETSID_CANDIDATES = ["/usr/bin/setsid", "/bin/setsid"];

export function findSetsid(): string | undefined {
  return SETSID_CANDIDATES.find((p) => existsSync(p));
}

/** The node intermediate: argv[1] is the JSON command line; stdio 0–3 are handed on as they are. */
const NODE_INTERMEDIATE =
  'const{spawn}=require("node:child_process");const[c,...a]=JSON.parse(process.argv[1]);' +
  'spawn(c,a,{detached:true,stdio:["ignore",1,2,3]}).on("error",(e)=>{process.stderr.write(String(e)+"\\n");process.exitCode=1}).unref();';

export interface DetachOptions {
  /** stdio of the target; index 3, if "pipe", is the launcher's end of the ready pipe */
  stdio: StdioOptions;
  env: NodeJS.ProcessEnv;
  /** default: setsid when found, else the node intermediate */
  strategy?: DetachStrategy;
}

/**
 * Spawns `argv` detached and returns the intermediate process (already unref'd; it exits at once).
 * Its `stdio[3]`, when asked for, is the launcher's end of a pipe the target holds as fd 3.
 */
export async function spawnDetached(argv: string[], opts: DetachOptions): Promise<ChildProcess> {
  const { spawn } = await import("node:child_process");
  const strategy = opts.strategy ?? (findSetsid() ? "setsid" : "node");
  const child =
    strategy === "setsid"
      ? spawn(findSetsid() ?? "setsid", ["-f", ...argv], { stdio: opts.stdio, env: opts.env })
      : spawn(process.execPath, ["-e", NODE_INTERMEDIATE, JSON.stringify(argv)], { stdio: opts.stdio, env: opts.env });
  child.unref();
  return child;
}
