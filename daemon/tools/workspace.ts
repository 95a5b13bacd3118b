/**
 * The workspace boundary: the session's cwd plus its additional directories. Paths are resolved
 * through symlinks (of the file, or of its nearest existing parent for a file not yet written)
 * before the check, so `..`, absolute paths and links that lead outside all count as outside.
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep, basename, join } from "node:path";

/** Resolves `p` (relative to `cwd`) and follows every link that exists along it. */
export function resolveReal(cwd: string, p: string): string {
  const abs = isAbsolute(p) ? resolve(p) : resolve(cwd, p);
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      const real = realpathSync(cur);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch {
      const parent = dirname(cur);
      if (parent === cur) return abs;
      tail.push(basename(cur));
      cur = parent;
    }
  }
}

export function realRoots(cwd: string, additional: readonly string[]): string[] {
  return [cwd, ...additional].map((d) => resolveReal("/", d));
}

export function isInside(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => {
    const rel = relative(root, path);
    return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
  });
}

/** Shows a path the short way when it lies under cwd. */
export function displayPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/**
 * False when `path`, a fixed name below `base` (a folder the session already works in: a folder of
 * its workspace, the repository root, the config folder, home), is certainly not there; true
 * otherwise, and the caller's real-path check in the thread pool decides as before. Asked on the
 * loop thread one entry at a time with lstat: one lookup in a folder already in use, never through
 * a link, so a link the repository holds cannot lead this thread into another (slow or hung) mount.
 * Most such names are absent, and each absent one cost a pool round trip and a realpath walk of
 * ENOENTs (docs/benchmarks.md).
 */
export function mayExistBelow(base: string, path: string): boolean {
  const rel = relative(base, path);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return true;
  let at = base;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(at, { throwIfNoEntry: false });
    } catch {
      return true;
    }
    if (stats === undefined) return false;
    if (!stats.isDirectory()) return true;
  }
  return true;
}
