/**
 * A bounded walk over the files under a folder, for glob and grep. Synchronous on purpose: it runs
 * inside the search worker (search-worker.ts), where blocking calls stall nothing else and stay off
 * libuv's thread pool, which the daemon's own file and LevelDB work shares.
 */
import { readdirSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";

/** Never interesting to search, and often huge. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([".git", "node_modules"]);

export interface WalkLimits {
  /** Stops after this many directory entries, so a walk of `/` still ends. */
  maxEntries?: number;
  /** Asked before each folder is read; false ends the walk (the caller knows why). */
  goOn?(): boolean;
}

export interface WalkState {
  /** Set when maxEntries cut the walk short. */
  incomplete: boolean;
}

/**
 * Yields absolute file paths under `root` (or `root` itself when it is a file), folders in name
 * order. Symlinked folders are not followed, so link cycles cannot trap the walk.
 */
export function* walkFiles(root: string, limits: WalkLimits = {}, state: WalkState = { incomplete: false }): Generator<string> {
  const top = statSync(root);
  if (!top.isDirectory()) {
    yield root;
    return;
  }
  let budget = limits.maxEntries ?? 200_000;
  const stack = [root];
  while (stack.length) {
    if (limits.goOn && !limits.goOn()) return;
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
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
      } else if (e.isFile() || (e.isSymbolicLink() && isFile(full))) {
        yield full;
      }
    }
    stack.push(...subdirs.reverse());
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
