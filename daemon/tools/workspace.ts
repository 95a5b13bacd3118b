/**
 * The workspace boundary: the session's cwd plus its additional directories. Paths are resolved
 * through symlinks (of the file, or of its nearest existing parent for a file not yet written)
 * before the check, so `..`, absolute paths and links that lead outside all count as outside.
 */
import { realpathSync } from "node:fs";
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
