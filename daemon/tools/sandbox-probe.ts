/**
 * Whether this machine can sandbox commands: bubblewrap on the daemon's PATH that can make the
 * namespaces the sandbox uses. Asked once per daemon (and bwrap path), by running it once with
 * those same flags (a yes is remembered for the process: `working`); the answer, with the reason
 * when it is no, is what the session's notice, /status and `reasonix daemon status` show.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";

export type SandboxStatus = { available: true; kind: "bubblewrap"; bwrap: string } | { available: false; kind: "none"; reason: string };

const PROBE_TIMEOUT_MS = 5000;

/** Where a user gets bubblewrap. */
export const INSTALL_HINT = "install the bubblewrap package (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)";

function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!dir.startsWith("/")) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function run(file: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], env: {} });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => {
      if (stderr.length < 4096) stderr += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: err.message });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/**
 * The bwrap binaries that made the sandbox's namespaces in this process, by path, with the file's
 * identity then. Each daemon asks once; the in-process tests start hundreds of daemons in one
 * process, and a probe from a large process cost them seconds of CPU in all. Only a yes is kept: a
 * failure may pass (a spawn refused under load), and a replaced binary is asked again.
 */
const working = new Map<string, string>();

function fileIdentity(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

export async function probeSandbox(pathVar: string | undefined, platform: NodeJS.Platform = process.platform): Promise<SandboxStatus> {
  if (platform !== "linux") {
    return { available: false, kind: "none", reason: `there is no command sandbox on ${platform} yet (only Linux, with bubblewrap)` };
  }
  const bwrap = findOnPath("bwrap", pathVar);
  if (!bwrap) return { available: false, kind: "none", reason: `bubblewrap is not installed (no bwrap on the daemon's PATH): ${INSTALL_HINT}` };
  const identity = fileIdentity(bwrap);
  const known = working.get(bwrap);
  if (known !== undefined && known === identity) return { available: true, kind: "bubblewrap", bwrap };
  const probe = await run(bwrap, [
    "--die-with-parent",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-net",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--",
    "/bin/true",
  ]);
  if (probe.code === 0) {
    if (identity !== undefined) working.set(bwrap, identity);
    return { available: true, kind: "bubblewrap", bwrap };
  }
  const said = probe.stderr.trim().split("\n")[0] || `exit code ${probe.code ?? "none"}`;
  return { available: false, kind: "none", reason: `bubblewrap (${bwrap}) cannot make the sandbox's namespaces here: ${said}` };
}

/** Said once when a session is created on a machine without a sandbox. */
export function noSandboxNotice(reason: string): string {
  return `Commands run WITHOUT a sandbox: ${reason}. They ask and are granted as before, but an approved command can reach everything you can.`;
}

/** One probe per bwrap search path for the daemon's life: the machine does not change under it. */
export function sandboxProber(pathVar: string | undefined): () => Promise<SandboxStatus> {
  let pending: Promise<SandboxStatus> | undefined;
  return () => (pending ??= probeSandbox(pathVar));
}
