/**
 * How long each function of the production code is, read from the TypeScript syntax tree (the
 * `typescript` 7 API, ts-project.ts): every function declaration, function expression, arrow
 * function, method, constructor and accessor, measured from the first line of its declaration to
 * the last of its body. A closure is counted on its own and as part of the function holding it, so
 * moving code into closures does not shorten anything.
 */
import { type Node, SyntaxKind } from "typescript/unstable/ast";
import { codeStart, lineOf, repoPath, sourceOf, withProject } from "./ts-project.js";

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
  return withProject(root, (project) => {
    const out: FunctionLength[] = [];
    for (const file of files) {
      const source = sourceOf(project, file);
      const text = source.text;
      const visit = (node: Node): void => {
        if (FUNCTION_KINDS.has(node.kind) && (node as { body?: Node }).body) {
          const first = lineOf(text, Math.min(codeStart(text, node.pos), node.end));
          out.push({ file: repoPath(root, file), line: first, name: nameOf(node, text), lines: lineOf(text, node.end) - first + 1 });
        }
        node.forEachChild(visit);
      };
      visit(source);
    }
    return out.sort((a, b) => b.lines - a.lines);
  });
}
