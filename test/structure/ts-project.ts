/**
 * The production code as the TypeScript 7 API sees it (`typescript/unstable/sync`, which runs the
 * compiler in a child process): `root`'s tsconfig project, its files' syntax trees and its type
 * checker. function-lengths.ts and record-writes.ts read the code through it, from one compiler.
 */
import { relative, sep } from "node:path";
import { API, type Project } from "typescript/unstable/sync";

export type { Project };
export type SourceFile = NonNullable<ReturnType<Project["program"]["getSourceFile"]>>;

const open = new Map<string, { api: API; project: Project }>();

/**
 * Hands `root`'s tsconfig project to `use`. The compiler is started once per process (about 1.5 s
 * of CPU each time) and serves every structure test; `closeProjects()` stops it.
 */
export function withProject<T>(root: string, use: (project: Project) => T): T {
  let entry = open.get(root);
  if (!entry) {
    const api = new API({ cwd: root });
    const project = api.updateSnapshot({ openProject: `${root}/tsconfig.json` }).getProjects()[0];
    if (!project) {
      api.close();
      throw new Error("the TypeScript API found no project");
    }
    entry = { api, project };
    open.set(root, entry);
  }
  return use(entry.project);
}

/** Stops the compilers `withProject` started, so the test process can end. */
export function closeProjects(): void {
  for (const { api } of open.values()) api.close();
  open.clear();
}

/** The syntax tree of `file` (an absolute path), which must be in the project. */
export function sourceOf(project: Project, file: string): SourceFile {
  const source = project.program.getSourceFile(file);
  if (!source) throw new Error(`the TypeScript API does not know ${file}`);
  return source;
}

/** The 1-based line of offset `at` in `text`. */
export const lineOf = (text: string, at: number): number => text.slice(0, at).split("\n").length;

/** Where the code at `pos` starts: a node's position includes the blank lines before it. */
export function codeStart(text: string, pos: number): number {
  const next = /\S/g;
  next.lastIndex = pos;
  return next.exec(text)?.index ?? text.length;
}

/** `file` relative to `root`, with "/" between its parts: how the structure tests name files. */
export const repoPath = (root: string, file: string): string => relative(root, file).split(sep).join("/");
