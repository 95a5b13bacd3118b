/**
 * What the model is told about its surroundings, gathered once at session start: the system prompt
 * must stay byte-identical for the session, so nothing here is looked up again until a reload.
 */
import { realpath, stat } from "node:fs/promises";
import { platform, release, type as osType } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { OutsideError, outsideNotice, PROJECT_BOUNDARY, readHead, realPathInside } from "../tools/read-head.js";
import { displayPath, isInside } from "../tools/workspace.js";
import { projectBounds, repositoryRoot } from "./project-instructions.js";

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

export interface Branch {
  branch: string | undefined;
  /** One line per git file skipped because it leads outside, for the user. */
  skipped: string[];
}

/** Reads a small file of the checkout; an OutsideError becomes a notice, any other failure nothing. */
async function readGitFile(path: string, inside: readonly string[], cwd: string, skipped: string[]): Promise<string | undefined> {
  try {
    return (await readHead(path, GIT_FILE_BYTES, inside))?.text;
  } catch (err) {
    if (err instanceof OutsideError) skipped.push(outsideNotice(displayPath(cwd, path), PROJECT_BOUNDARY, err.real));
    return undefined;
  }
}

/**
 * A linked worktree's git folder lives in the main checkout, which may be anywhere; git keeps a
 * back-link there (`gitdir`, naming this `.git` file). A pointer elsewhere with no such back-link is
 * not this checkout's git folder.
 */
async function pointsBack(gitdir: string, dotGit: string): Promise<boolean> {
  try {
    const back = (await readHead(join(gitdir, "gitdir"), GIT_FILE_BYTES, [gitdir]))?.text.trim();
    if (!back) return false;
    return (await realpath(resolve(gitdir, back))) === (await realpath(dotGit));
  } catch {
    return false;
  }
}

/**
 * The git folder of a checkout (`.git` itself, or where a worktree's `.git` file points) and the
 * folders its HEAD may really lie in; undefined, with a notice, when `.git` leads outside `bounds`.
 */
async function gitDir(
  root: string,
  bounds: readonly string[],
  cwd: string,
  skipped: string[],
): Promise<{ dir: string; inside: readonly string[] } | undefined> {
  const dotGit = join(root, ".git");
  try {
    if ((await stat(dotGit)).isDirectory()) return { dir: await realPathInside(dotGit, bounds), inside: bounds };
    const text = await readGitFile(dotGit, bounds, cwd, skipped);
    const pointer = /^gitdir:\s*(.+)$/m.exec(text ?? "")?.[1]?.trim();
    if (!pointer) return undefined;
    const dir = await realpath(isAbsolute(pointer) ? pointer : resolve(root, pointer));
    if (isInside(dir, bounds)) return { dir, inside: bounds };
    if (await pointsBack(dir, dotGit)) return { dir, inside: [dir] };
    skipped.push(outsideNotice(displayPath(cwd, dotGit), PROJECT_BOUNDARY, dir));
    return undefined;
  } catch (err) {
    if (err instanceof OutsideError) skipped.push(outsideNotice(displayPath(cwd, dotGit), PROJECT_BOUNDARY, err.real));
    return undefined;
  }
}

/**
 * The checked-out branch from HEAD, read directly (no git process); a detached HEAD shows its
 * commit. `bounds` are the real folders the checkout's files may lie in (projectBounds).
 */
export async function currentBranch(root: string, bounds: readonly string[], cwd = root): Promise<Branch> {
  const skipped: string[] = [];
  const git = await gitDir(root, bounds, cwd, skipped);
  if (!git) return { branch: undefined, skipped };
  const head = ((await readGitFile(join(git.dir, "HEAD"), git.inside, cwd, skipped)) ?? "").trim();
  const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head)?.[1];
  if (ref) return { branch: ref, skipped };
  return { branch: /^[0-9a-f]{7,64}$/.test(head) ? `(detached at ${head.slice(0, 12)})` : undefined, skipped };
}

export async function gatherFacts(
  cwd: string,
  additionalDirectories: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  now = new Date(),
): Promise<{ facts: EnvironmentFacts; skipped: string[] }> {
  const root = await repositoryRoot(cwd);
  const git = root ? await currentBranch(root, await projectBounds(cwd, additionalDirectories), cwd) : undefined;
  return {
    facts: {
      os: `${osType()} ${release()} (${platform()})`,
      shell: env.SHELL,
      date: now.toISOString().slice(0, 10),
      roots: [cwd, ...additionalDirectories],
      git: root ? { root, branch: git?.branch } : undefined,
    },
    skipped: git?.skipped ?? [],
  };
}
