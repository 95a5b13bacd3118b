/**
 * What the model is told about its surroundings, gathered once at session start: the system prompt
 * must stay byte-identical for the session, so nothing here is looked up again until a reload.
 */
import { stat } from "node:fs/promises";
import { platform, release, type as osType } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { readHead } from "../tools/read-head.js";
import { repositoryRoot } from "./project-instructions.js";

/** A `.git` file and HEAD hold one line; a checkout from anywhere may hold anything there. */
const GIT_FILE_BYTES = 4096;

export interface EnvironmentFacts {
  os: string;
  /** The user's login shell; commands themselves run under /bin/sh. */
  shell: string | undefined;
  /** The day the session started (YYYY-MM-DD). */
  date: string;
  roots: readonly string[];
  git: { root: string; branch: string | undefined } | undefined;
}

/** The git folder of a checkout: `.git` itself, or where a worktree's `.git` file points. */
async function gitDir(root: string): Promise<string | undefined> {
  const dotGit = join(root, ".git");
  try {
    if ((await stat(dotGit)).isDirectory()) return dotGit;
    const pointer = /^gitdir:\s*(.+)$/m.exec((await readHead(dotGit, GIT_FILE_BYTES))?.text ?? "")?.[1]?.trim();
    if (!pointer) return undefined;
    return isAbsolute(pointer) ? pointer : resolve(root, pointer);
  } catch {
    return undefined;
  }
}

/** The checked-out branch from HEAD, read directly (no git process); a detached HEAD shows its commit. */
export async function currentBranch(root: string): Promise<string | undefined> {
  const dir = await gitDir(root);
  if (!dir) return undefined;
  try {
    const head = ((await readHead(join(dir, "HEAD"), GIT_FILE_BYTES))?.text ?? "").trim();
    const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head)?.[1];
    if (ref) return ref;
    return /^[0-9a-f]{7,64}$/.test(head) ? `(detached at ${head.slice(0, 12)})` : undefined;
  } catch {
    return undefined;
  }
}

export async function gatherFacts(
  cwd: string,
  additionalDirectories: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now = new Date(),
): Promise<EnvironmentFacts> {
  const root = await repositoryRoot(cwd);
  return {
    os: `${osType()} ${release()} (${platform()})`,
    shell: env.SHELL,
    date: now.toISOString().slice(0, 10),
    roots: [cwd, ...additionalDirectories],
    git: root ? { root, branch: await currentBranch(root) } : undefined,
  };
}
