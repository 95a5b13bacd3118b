/** A bounded, cancellable walk over the files under a folder, for glob and grep. */
import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";

/** Never interesting to search, and often huge. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([".git", "node_modules"]);

export interface WalkLimits {
  signal: AbortSignal;
  /** Stops after this many directory entries, so a walk of `/` still ends. */
  maxEntries?: number;
}

export interface WalkState {
  /** Set when maxEntries cut the walk short. */
  incomplete: boolean;
}

/**
 * Yields absolute file paths under `root` (or `root` itself when it is a file), folders in name
 * order. Symlinked folders are not followed, so link cycles cannot trap the walk.
 */
export async function* walkFiles(root: string, limits: WalkLimits, state: WalkState = { incomplete: false }): AsyncGenerator<string> {
  const top = await stat(root);
  if (!top.isDirectory()) {
    yield root;
    return;
  }
  let budget = limits.maxEntries ?? 200_000;
  const stack = [root];
  while (stack.length) {
    if (limits.signal.aborted) return;
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const e of entries) {
      if (--budget < 0) {
        state.incomplete = true;
        return;
      }
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) subdirs.push(full);
      } else if (e.isFile() || (e.isSymbolicLink() && (await isFile(full)))) {
        yield full;
      }
    }
    stack.push(...subdirs.reverse());
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
