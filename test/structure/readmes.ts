/**
 * The folder READMEs against the code: every production file is named in its folder's README (or,
 * for a folder without one, the nearest README above it), and each README's `Folders imported:`
 * line names exactly the folders its folder's modules import. Prose can say why; this line is what
 * the import graph must agree with.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The README that speaks for `folder` (repo-relative): its own, else the nearest one above it. */
export function readmeOf(root: string, folder: string): string | undefined {
  for (let at = folder; at !== "." && at !== ""; at = dirname(at)) {
    if (existsSync(join(root, at, "README.md"))) return join(at, "README.md");
  }
  return undefined;
}

/** Production files (no tests) of the folder that no README names, by file name with or without `.ts`. */
export function unnamedFiles(root: string, folders: readonly string[]): string[] {
  const missing: string[] = [];
  for (const folder of folders) {
    const readme = readmeOf(root, folder);
    const text = readme ? readFileSync(join(root, readme), "utf8") : "";
    for (const name of readdirSync(join(root, folder))) {
      if (!name.endsWith(".ts") || name.endsWith(".test.ts") || name.endsWith(".d.ts")) continue;
      const bare = name.slice(0, -3);
      const named = new RegExp(`(^|[^A-Za-z0-9_.-])${bare.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&")}(\\.ts)?([^A-Za-z0-9_-]|$)`, "m");
      if (!named.test(text)) missing.push(`${folder}/${name}${readme ? ` (not in ${readme})` : " (no README)"}`);
    }
  }
  return missing.sort();
}

/**
 * The folders a README's `Folders imported:` line names for `folder`, as repo-relative folders:
 * `shared/`, `shim/` and `daemon/…` as they are, anything else under `daemon/`. A README that speaks
 * for a subfolder too has a line `Folders imported by \`sub/\`: …` for it. Undefined: no such line.
 */
export function statedImports(root: string, folder: string): string[] | undefined {
  const readme = readmeOf(root, folder);
  if (!readme) return undefined;
  const text = readFileSync(join(root, readme), "utf8");
  const own = dirname(readme);
  const sub = folder === own ? undefined : folder.slice(own.length + 1);
  const lines = text.split("\n").filter((l) => l.startsWith("Folders imported"));
  const line = lines.find((l) => (sub ? l.startsWith(`Folders imported by \`${sub}/\`:`) : l.startsWith("Folders imported:")));
  if (line === undefined) return undefined;
  const names = [...line.slice(line.indexOf(":") + 1).matchAll(/`([^`]+)\/`/g)].map((m) => m[1]!);
  if (/:\s*none\.?\s*$/.test(line)) return [];
  return names.map((n) => (n === "shared" || n === "shim" || n === "daemon" || n.startsWith("daemon/") ? n : `daemon/${n}`)).sort();
}
