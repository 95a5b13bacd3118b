/**
 * The import graph of the production code (shared/, shim/, daemon/; tests excluded), read from
 * the sources: every `import … from "./x.js"`, `export … from`, and dynamic `import("./x.js")`,
 * type-only ones included, since a type-only circle still ties two modules' designs together.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

export const PRODUCTION_ROOTS = ["shared", "shim", "daemon"];

export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const top of PRODUCTION_ROOTS) walk(join(root, top));
  return out.sort();
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Module -> the modules it imports, both as paths relative to `root` ("daemon/sessions/session.ts"). */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, "utf8");
    const deps = new Set<string>();
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      if (!spec?.startsWith(".")) continue;
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      deps.add(relative(root, target).split(sep).join("/"));
    }
    graph.set(relative(root, file).split(sep).join("/"), [...deps].sort());
  }
  return graph;
}

/** Strongly connected components with more than one member, or a module importing itself. */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indices.get(w)!));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) connect(v);
  return found;
}

/** The folder of a module: "daemon/sessions" for "daemon/sessions/session.ts". */
export const folderOf = (module: string): string => module.slice(0, module.lastIndexOf("/"));

/** The same graph between folders (edges inside one folder dropped). */
export function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [from, deps] of graph) {
    const a = folderOf(from);
    const set = folders.get(a) ?? new Set<string>();
    folders.set(a, set);
    for (const to of deps) if (folderOf(to) !== a) set.add(folderOf(to));
  }
  return new Map([...folders].map(([k, v]) => [k, [...v].sort()]));
}
