/**
 * How long each function of the production code is, read from the TypeScript syntax tree (the
 * `typescript` 7 API, as record-writes.ts): every function declaration, function expression, arrow
 * function, method, constructor and accessor, measured from the first line of its declaration to
 * the last of its body. A closure is counted on its own and as part of the function holding it, so
 * moving code into closures does not shorten anything.
 */
import { relative, sep } from "node:path";
import { API } from "typescript/unstable/sync";
import { type Node, SyntaxKind } from "typescript/unstable/ast";

export interface FunctionLength {
  file: string;
  line: number;
  name: string;
  lines: number;
}

const FUNCTION_KINDS = new Set<SyntaxKind>([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

const lineOf = (text: string, at: number): number => text.slice(0, at).split("\n").length;

/** What a reader would call the function: its own name, or the name it is assigned to. */
function nameOf(node: Node, text: string): string {
  const own = (node as { name?: Node }).name;
  if (own) return text.slice(own.pos, own.end).trim();
  const parent = node.parent as { name?: Node } | undefined;
  if (parent?.name) return text.slice(parent.name.pos, parent.name.end).trim();
  return "(anonymous)";
}

/** Every function in `files` (absolute paths of files in `root`'s tsconfig project) with its length in lines. */
export function functionLengths(root: string, files: readonly string[]): FunctionLength[] {
  const api = new API({ cwd: root });
  try {
    const project = api.updateSnapshot({ openProject: `${root}/tsconfig.json` }).getProjects()[0];
    if (!project) throw new Error("the TypeScript API found no project");
    const out: FunctionLength[] = [];
    for (const file of files) {
      const source = project.program.getSourceFile(file);
      if (!source) throw new Error(`the TypeScript API does not know ${file}`);
      const text = source.text;
      const visit = (node: Node): void => {
        if (FUNCTION_KINDS.has(node.kind) && (node as { body?: Node }).body) {
          // A node's position includes the comments and blank lines before it.
          const start = node.pos + (text.slice(node.pos, node.end).length - text.slice(node.pos, node.end).trimStart().length);
          const first = lineOf(text, start);
          out.push({
            file: relative(root, file).split(sep).join("/"),
            line: first,
            name: nameOf(node, text),
            lines: lineOf(text, node.end) - first + 1,
          });
        }
        node.forEachChild(visit);
      };
      visit(source);
    }
    return out.sort((a, b) => b.lines - a.lines);
  } finally {
    api.close();
  }
}
