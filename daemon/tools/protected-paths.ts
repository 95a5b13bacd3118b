/**
 * Protected paths: files inside the workspace that become code somewhere else. A write to
 * `.git/config` (core.fsmonitor, core.pager, aliases) or a hook runs a command at the user's next
 * `git status` or commit; `.vscode` and `.idea` hold tasks and run configurations the editor
 * starts; direnv runs `.envrc` on `cd`; `.reasonix` and `.claude` hold agents' own settings. So a
 * tool's write there asks even in workspace-write (permissions.ts), and the command sandbox keeps
 * them read-only.
 *
 * The rule: a path is protected when, relative to any root that holds it, one of its components is
 * one of PROTECTED_NAMES, at any depth (a nested repository's `sub/.git/config`, a worktree's
 * `.git` file, the folder itself). Names are compared case-insensitively and after Unicode
 * compatibility folding: on a case-insensitive file system (macOS, Windows) `.GIT/config` is
 * `.git/config`, and asking once too often is the safe side. Only components below a root count:
 * a root the user chose to work in is theirs, and a path outside every root is not judged here
 * (the workspace boundary asks for it anyway).
 *
 * Dependency-free (node:path only) and pure: callers pass paths already resolved through links
 * (and may pass the unresolved one too); nothing here touches the disk.
 */
import { isAbsolute, relative, sep } from "node:path";

/** The protected names; a path with one of them as a component below a root is protected. */
export const PROTECTED_NAMES = [".git", ".husky", ".vscode", ".idea", ".envrc", ".reasonix", ".claude"] as const;
export type ProtectedName = (typeof PROTECTED_NAMES)[number];

/**
 * The same rule as globs relative to a root, for tools that take globs: each name and everything
 * under it, at any depth. Match them case-insensitively.
 */
export const PROTECTED_GLOBS: readonly string[] = PROTECTED_NAMES.flatMap((n) => [`**/${n}`, `**/${n}/**`]);

/** Why a write there asks, in the words the permission question uses. */
export const PROTECTED_WHY: Readonly<Record<ProtectedName, string>> = {
  ".git": "git runs commands its config and hooks name",
  ".husky": "git runs these hooks",
  ".vscode": "the editor runs tasks and settings from here",
  ".idea": "the IDE runs configurations from here",
  ".envrc": "direnv runs it on cd",
  ".reasonix": "Reasonix's own settings",
  ".claude": "an agent's settings and hooks",
};

/**
 * A name as a case-insensitive file system may see it: compatibility forms folded (`ſ` is `s`),
 * then upper and lower case (so a dotless `ı` counts as `i`). Folding too much only asks more.
 */
export function foldName(name: string): string {
  return name.normalize("NFKC").toUpperCase().toLowerCase();
}

const FOLDED = new Map<string, ProtectedName>(PROTECTED_NAMES.map((n) => [foldName(n), n]));

/** The protected name `path` falls under, relative to the first root that has one, or undefined. */
export function protectedName(path: string, roots: readonly string[]): ProtectedName | undefined {
  for (const root of roots) {
    const rel = relative(root, path);
    if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) continue;
    for (const part of rel.split(sep)) {
      const hit = FOLDED.get(foldName(part));
      if (hit) return hit;
    }
  }
  return undefined;
}

/** Whether a write to `realPath` (absolute, links resolved) is protected under any of `roots`. */
export function isProtected(realPath: string, roots: readonly string[]): boolean {
  return protectedName(realPath, roots) !== undefined;
}
