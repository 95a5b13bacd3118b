/**
 * A bounded walk over the files under a folder, for glob and grep. Synchronous on purpose: it runs
 * inside the search worker (search-worker.ts), where blocking calls stall nothing else and stay off
 * libuv's thread pool, which the daemon's own file and LevelDB work shares.
 */
import { readdirSync, realpathSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { isInside } from "../workspace.js";

/** Never interesting to search, and often huge. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([".git", "node_modules"]);

/** How many links the walk left out because they lead outside, with the first few named. */
export const OUTSIDE_NAMED = 5;

export interface WalkLimits {
  /** Stops after this many directory entries, so a walk of `/` still ends. */
  maxEntries?: number;
  /** Asked before each folder is read; false ends the walk (the caller knows why). */
  goOn?(): boolean;
  /**
   * Real paths a linked file must really lie in to be yielded: a link in the workspace to a key,
   * or to /proc/self/environ, is counted in `state.outside` instead. Absent: every link is followed.
   */
  inside?: readonly string[];
}

export interface OutsideLinks {
  count: number;
  /** The first OUTSIDE_NAMED of them, as found (absolute). */
  paths: string[];
}

export interface WalkState {
  /** Set when maxEntries cut the walk short. */
  incomplete: boolean;
  /** Links to files outside `limits.inside`, not yielded. */
  outside: OutsideLinks;
}

export function walkState(): WalkState {
  return { incomplete: false, outside: { count: 0, paths: [] } };
}

export function noteOutside(state: WalkState, path: string): void {
  if (state.outside.paths.length < OUTSIDE_NAMED) state.outside.paths.push(path);
  state.outside.count++;
}

/**
 * Yields absolute file paths under `root` (or `root` itself when it is a file), folders in name
 * order. Symlinked folders are not followed, so link cycles cannot trap the walk; a symlinked file
 * is yielded when it leads to a regular file inside `limits.inside`.
 */
export function* walkFiles(root: string, limits: WalkLimits = {}, state: WalkState = walkState()): Generator<string> {
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
      } else if (e.isFile()) {
        yield full;
      } else if (e.isSymbolicLink()) {
        const real = linkedFile(full);
        if (real === undefined) continue;
        if (limits.inside && !isInside(real, limits.inside)) noteOutside(state, full);
        else yield full;
      }
    }
    stack.push(...subdirs.reverse());
  }
}

/** Where a link leads when that is a regular file; else undefined (dangling, a folder, a device). */
function linkedFile(path: string): string | undefined {
  try {
    const real = realpathSync(path);
    return statSync(real).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}
