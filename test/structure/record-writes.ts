/**
 * Where a session record is changed, read from the TypeScript program with its type checker (the
 * `typescript` 7 API, ts-project.ts): every
 * assignment (`=`, `+=`, `??=`, …), `++`, `--` and `delete` whose target is a property declared by
 * the record's interfaces (`SessionRecord` and the records it holds), however the object is named
 * (`record.title`, `this.stored.goal`, `s.record.mode`), and every `Object.assign` onto a value of
 * one of those types. Destructuring assignments into a record's fields are not looked for.
 */
import { type Node, SyntaxKind } from "typescript/unstable/ast";
import {
  isBinaryExpression,
  isCallExpression,
  isDeleteExpression,
  isElementAccessExpression,
  isPostfixUnaryExpression,
  isPrefixUnaryExpression,
  isPropertyAccessExpression,
} from "typescript/unstable/ast/is";
import { codeStart, lineOf, repoPath, sourceOf, withProject } from "./ts-project.js";

/** The interfaces a session record is made of: its own fields and those of the objects it holds. */
export const RECORD_TYPES = ["SessionRecord", "CompactionRecord", "UsageTotals", "GoalState"];

export interface RecordWrite {
  file: string;
  line: number;
  code: string;
}

interface Candidate {
  file: string;
  text: string;
  at: number;
  node: Node;
  /** The node names a property (its symbol is looked at), or a value (its type is). */
  via: "property" | "value";
}

/** The node a write changes a property through, if `node` writes one. */
function writtenProperty(node: Node): Node | undefined {
  let target: Node | undefined;
  if (isBinaryExpression(node) && node.operatorToken.kind >= SyntaxKind.FirstAssignment && node.operatorToken.kind <= SyntaxKind.LastAssignment) {
    target = node.left;
  } else if (
    (isPrefixUnaryExpression(node) || isPostfixUnaryExpression(node)) &&
    [SyntaxKind.PlusPlusToken, SyntaxKind.MinusMinusToken].includes(node.operator)
  ) {
    target = node.operand;
  } else if (isDeleteExpression(node)) target = node.expression;
  if (target && isPropertyAccessExpression(target)) return target.name;
  if (target && isElementAccessExpression(target)) return target.argumentExpression;
  return undefined;
}

/** Every write to a record field in `files` (absolute paths of files in `root`'s tsconfig project). */
export function recordWrites(root: string, files: readonly string[]): RecordWrite[] {
  return withProject(root, (project) => {
    const found: Candidate[] = [];
    for (const file of files) {
      const source = sourceOf(project, file);
      const visit = (node: Node): void => {
        const property = writtenProperty(node);
        if (property) found.push({ file, text: source.text, at: node.pos, node: property, via: "property" });
        if (isCallExpression(node) && source.text.slice(node.expression.pos, node.expression.end).trim() === "Object.assign" && node.arguments[0]) {
          found.push({ file, text: source.text, at: node.pos, node: node.arguments[0], via: "value" });
        }
        node.forEachChild(visit);
      };
      visit(source);
    }
    const properties = found.filter((c) => c.via === "property");
    const values = found.filter((c) => c.via === "value");
    // One round trip each: the checker answers for every node at once.
    const symbols = project.checker.getSymbolAtLocation(properties.map((c) => c.node));
    const types = project.checker.getTypeAtLocation(values.map((c) => c.node));
    const isRecord = (name: string | undefined): boolean => name !== undefined && RECORD_TYPES.includes(name);
    const hits = [
      ...properties.filter((_, i) => isRecord(symbols[i]?.getParent()?.name)),
      ...values.filter((_, i) => isRecord(types[i]?.getSymbol()?.name) || isRecord(types[i]?.getAliasSymbol()?.name)),
    ];
    return hits
      .map((c) => {
        const start = codeStart(c.text, c.at);
        const end = c.text.indexOf("\n", start);
        return { file: repoPath(root, c.file), line: lineOf(c.text, start), code: c.text.slice(start, end < 0 ? undefined : end).trim() };
      })
      .sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  });
}
