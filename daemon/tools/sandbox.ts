/**
 * The OS sandbox that makes the permission presets true for commands (run_command, background
 * jobs, plugin actions), on Linux with bubblewrap. Asking is not enough: one approved command
 * could otherwise read the daemon's environment, every session's store and socket, and rewrite
 * anything the user can. In `read-only` and `workspace-write` a command runs in its own pid and
 * IPC namespaces (it sees no other process: not the daemon, not another session's commands, not
 * their /proc), with the daemon's folders (home, state, runtime, socket) absent, the file system
 * read-only except, in workspace-write, the session's folders and a private /tmp, the protected
 * paths at the top of each folder read-only still, and the network per `sandbox.network`.
 * `danger-full-access` runs commands as they are. Where no sandbox can be made, the session says
 * so (sandbox-probe.ts) and commands ask and grant exactly as before.
 */
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { PROTECTED_NAMES } from "./protected-paths.js";
import { runMarkArgs } from "./run-sweep.js";
import { withLifeline, type CommandLine } from "./lifeline.js";
import type { SandboxStatus } from "./sandbox-probe.js";

export type { SandboxStatus };

export type SandboxedPreset = "read-only" | "workspace-write";

export interface SandboxSpec {
  /** Absolute path of the bwrap binary. */
  bwrap: string;
  preset: SandboxedPreset;
  /** The session's folders, links resolved: writable in workspace-write, readable always. */
  roots: readonly string[];
  /** The daemon's own folders: empty inside. */
  hidden: readonly string[];
  /** Shown read-only even inside a hidden folder (a plugin's own folder in the config folder). */
  readable: readonly string[];
  /** Host folder bound at /tmp (workspace-write, shared by the session's commands); else an empty tmpfs. */
  tmp: string | undefined;
  network: boolean;
}

type Mount = { op: "--ro-bind" | "--bind" | "--tmpfs" | "--dev" | "--proc"; path: string; source?: string; rank: number };

function inside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function depth(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}

/** The protected entries at the top of each root that exist, by real path, when that stays inside a root. */
function protectedEntries(roots: readonly string[]): string[] {
  const out = new Set<string>();
  for (const root of roots) {
    for (const name of PROTECTED_NAMES) {
      const entry = join(root, name);
      if (!exists(entry)) continue;
      let real: string;
      try {
        real = realpathSync(entry);
      } catch {
        continue;
      }
      // A link out of the roots leads somewhere read-only anyway.
      if (roots.some((r) => inside(real, r))) out.add(real);
    }
  }
  return [...out];
}

/**
 * bwrap's arguments up to and including `--`. Mounts are applied shallowest first, so a deeper one
 * (a root inside /tmp, a hidden folder inside a root, `.git` inside a writable root) wins; at the
 * same path the later rank wins.
 */
export function bwrapArgs(spec: SandboxSpec, cwd: string, opts: WrapOptions = {}): string[] {
  const writable = spec.preset === "workspace-write";
  const mounts: Mount[] = [
    { op: "--ro-bind", source: "/", path: "/", rank: 0 },
    { op: "--dev", path: "/dev", rank: 0 },
    { op: "--proc", path: "/proc", rank: 0 },
    spec.tmp && writable ? { op: "--bind", source: spec.tmp, path: "/tmp", rank: 1 } : { op: "--tmpfs", path: "/tmp", rank: 1 },
  ];
  for (const root of spec.roots) mounts.push({ op: writable ? "--bind" : "--ro-bind", source: root, path: root, rank: 2 });
  const hidden: string[] = [];
  for (const dir of spec.hidden) {
    // Under the private /tmp and in no root, it is not there to hide; a mount point would be made for nothing.
    if (!exists(dir) || (inside(dir, "/tmp") && !spec.roots.some((r) => inside(dir, r)))) continue;
    mounts.push({ op: "--tmpfs", path: dir, rank: 3 });
    hidden.push(dir);
  }
  if (writable) for (const entry of protectedEntries(spec.roots)) mounts.push({ op: "--ro-bind", source: entry, path: entry, rank: 4 });
  for (const dir of spec.readable) if (exists(dir)) mounts.push({ op: "--ro-bind", source: dir, path: dir, rank: 5 });
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);

  const args = ["--die-with-parent", "--unshare-pid", "--unshare-ipc"];
  if (!spec.network) args.push("--unshare-net");
  // In an editor's terminal: no TIOCSTI into the terminal the command was given.
  if (opts.newSession) args.push("--new-session");
  // So that the daemon finds this run's processes again when it is killed (run-sweep.ts).
  if (opts.runId) args.push(...runMarkArgs(opts.runId));
  for (const m of mounts) {
    if (m.op === "--ro-bind" || m.op === "--bind") args.push(m.op, m.source!, m.path);
    else args.push(m.op, m.path);
  }
  // Last, once every mount point inside them is made: the hidden folders are empty and stay so.
  for (const dir of hidden) args.push("--remount-ro", dir);
  args.push("--setenv", "TMPDIR", "/tmp", "--chdir", cwd, "--");
  return args;
}

export interface WrapOptions {
  /** In an editor's terminal: its own session. */
  newSession?: boolean;
  /** The run's id (run-sweep.ts `newRunId`), marked in bwrap's arguments; only where the kill is not ours to make reliable. */
  runId?: string | undefined;
  /** Spawned by the daemon (lifeline.ts `spawnCommand`): the command ends when the daemon does. */
  lifeline?: boolean;
}

/** A command line to run under the sandbox: `bwrap … -- /bin/sh -c command`. */
export interface Sandbox {
  readonly spec: SandboxSpec;
  /** The program and arguments that run `argv` confined, in `cwd`. */
  wrap(argv: readonly string[], cwd: string, opts?: WrapOptions): CommandLine;
  /** One line for the model and /status: what the command could and could not do. */
  describe(): string;
}

export function describeSpec(spec: Pick<SandboxSpec, "preset" | "network">): string {
  const files =
    spec.preset === "workspace-write"
      ? "writes only inside the session's folders and /tmp (protected paths such as .git stay read-only)"
      : "no writes outside an empty /tmp";
  return `bubblewrap sandbox (${spec.preset}): ${files}; ${spec.network ? "network on" : "no network"}; no other processes or Reasonix files visible`;
}

export function sandboxOf(spec: SandboxSpec): Sandbox {
  return {
    spec,
    wrap: (argv, cwd, opts) => {
      const lifeline = opts?.lifeline === true;
      return { file: spec.bwrap, args: [...bwrapArgs(spec, cwd, opts), ...(lifeline ? withLifeline(argv) : argv)], lifeline };
    },
    describe: () => describeSpec(spec),
  };
}

/** What a session's sandbox is made from, each read when a command is about to run. */
export interface SessionSandboxHost {
  status(): Promise<SandboxStatus>;
  hidden: readonly string[];
  network(): boolean;
  /**
   * Where the sessions' private /tmp folders are made: one folder of the daemon's own, emptied at
   * each start, so a daemon that was killed leaves no command's temporary files behind for long.
   */
  tmpRoot: string;
}

/**
 * A session's sandbox: the spec for the current preset and roots, and the private /tmp its
 * commands share (made on first use, removed when the session stops).
 */
export class SessionSandbox {
  private tmp: string | undefined;

  constructor(private readonly host: SessionSandboxHost) {}

  /** The sandbox a command runs in now, or undefined: it runs unconfined (danger-full-access, or none available). */
  async plan(preset: string, roots: readonly string[], readable: readonly string[] = []): Promise<Sandbox | undefined> {
    if (preset !== "read-only" && preset !== "workspace-write") return undefined;
    const status = await this.host.status();
    if (!status.available) return undefined;
    if (preset === "workspace-write" && this.tmp === undefined) {
      mkdirSync(this.host.tmpRoot, { recursive: true, mode: 0o700 });
      this.tmp = mkdtempSync(join(this.host.tmpRoot, "session-"));
    }
    return sandboxOf({ bwrap: status.bwrap, preset, roots, hidden: this.host.hidden, readable, tmp: this.tmp, network: this.host.network() });
  }

  status(): Promise<SandboxStatus> {
    return this.host.status();
  }

  dispose(): void {
    if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
    this.tmp = undefined;
  }
}

/** What in a failed sandboxed command's output says the sandbox stopped it. */
const READ_ONLY = /Read-only file system|EROFS/;
const NO_NETWORK = /Could not resolve host|Temporary failure in name resolution|EAI_AGAIN|ENOTFOUND|Network is unreachable|ENETUNREACH|getaddrinfo/;

const MISSING = ["No such file or directory", "Directory nonexistent"];

/** A line saying a path under /tmp is missing: the host's /tmp is not the sandbox's. */
function missingInTmp(output: string): string | undefined {
  for (const line of output.split("\n")) {
    if (line.includes("/tmp/") && MISSING.some((m) => line.includes(m))) return `${MISSING.find((m) => line.includes(m))}; /tmp is private to the sandbox`;
  }
  return undefined;
}

/** The note a failed command gets when its output looks like the sandbox stopped it; else undefined. */
export function sandboxStopNote(sandbox: Sandbox, output: string): string | undefined {
  const cause = READ_ONLY.exec(output)?.[0] ?? (sandbox.spec.network ? undefined : NO_NETWORK.exec(output)?.[0]) ?? missingInTmp(output);
  if (!cause) return undefined;
  return (
    `[sandbox] This command ran in the ${describeSpec(sandbox.spec)}, and it looks like the sandbox stopped it ("${cause}"). ` +
    "If it must run outside, call run_command again with outsideSandbox: true; the user will be asked."
  );
}
