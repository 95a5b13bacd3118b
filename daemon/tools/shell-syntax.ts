/**
 * A shell command as the permission gate needs to see it: the simple commands that will run (its
 * parts), each with its words after quote removal, or `opaque` when the command cannot be judged
 * part by part and only its exact text may match a grant.
 *
 * Parsed with tree-sitter-bash (WASM, loaded once on first use). Only syntax that is understood
 * node by node is split into parts: anything else (substitutions and expansions, control flow,
 * functions, parse errors, node types this file does not know) is opaque, so a grammar gap can
 * only make the gate ask more, never less.
 */
import { createRequire } from "node:module";
import type { Node, Parser as ParserType } from "web-tree-sitter";
import { errorText } from "../../shared/error-text.js";

export interface CommandPart {
  /** The part's source text, its redirections included. */
  text: string;
  /** Its words after quote removal: argv[0] is the program. */
  argv: string[];
  /** Per word: written bare, with no quotes, escapes, glob, brace or tilde characters. */
  plain: boolean[];
  /** Redirected to or from a file (anything but /dev/null and descriptor duplication), or fed a here-document or here-string. */
  fileRedirects: boolean;
  /** Sets variables for the command (`PATH=/x npm test`). */
  assignments: boolean;
  /** Reads its standard input from a pipe. */
  piped: boolean;
}

export type CommandShape = { kind: "parts"; parts: CommandPart[] } | { kind: "opaque"; reason: string };

/** Longer commands are not parsed: they can only match a grant of their exact text. */
const MAX_PARSED = 64 * 1024;

/** Anything whose value is only known when the shell runs it. */
const EXPANSIONS = new Set([
  "command_substitution",
  "process_substitution",
  "simple_expansion",
  "expansion",
  "arithmetic_expansion",
  "brace_expression",
  "ansi_c_string",
  "translated_string",
]);

const LIST_TOKENS = new Set(["&&", "||", ";", "&", "\n", "(", ")", "{", "}"]);
const PIPE_TOKENS = new Set(["|", "|&"]);
const REDIRECT_OPS = new Set([">", ">>", "<", "&>", "&>>", ">&", "<&", ">|", "<>", ">&-", "<&-"]);
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
/**
 * The grammar splits words at \r, \v, \f and Unicode spaces, the shell does not: with any of
 * them (or another control character) the words seen here would not be the words that run.
 */
const UNSHARED_WHITESPACE = /[\x00-\x08\x0b-\x1f\x7f]|[^\S \t\n]/u;

class Opaque extends Error {}

let parserPromise: Promise<ParserType> | undefined;

async function loadParser(): Promise<ParserType> {
  const { Parser, Language } = await import("web-tree-sitter");
  await Parser.init();
  const require = createRequire(import.meta.url);
  const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/** Splits `command` into its parts; never throws (a failure is an opaque shape, which only asks more). */
export async function commandShape(command: string): Promise<CommandShape> {
  const text = command.trim();
  if (text === "") return { kind: "opaque", reason: "empty" };
  if (text.length > MAX_PARSED) return { kind: "opaque", reason: "too long to parse" };
  if (UNSHARED_WHITESPACE.test(text)) return { kind: "opaque", reason: "control characters or unusual spaces" };
  let parser: ParserType;
  try {
    parserPromise ??= loadParser();
    parser = await parserPromise;
  } catch (err) {
    parserPromise = undefined;
    return { kind: "opaque", reason: `the shell parser did not load (${errorText(err)})` };
  }
  const tree = parser.parse(text);
  if (!tree) return { kind: "opaque", reason: "does not parse" };
  try {
    const root = tree.rootNode;
    if (root.hasError) return { kind: "opaque", reason: "does not parse" };
    if (root.descendantsOfType([...EXPANSIONS]).length > 0) return { kind: "opaque", reason: "substitution or expansion" };
    const parts: CommandPart[] = [];
    statements(root, parts, false);
    if (parts.length === 0) return { kind: "opaque", reason: "no command" };
    return { kind: "parts", parts };
  } catch (err) {
    if (err instanceof Opaque) return { kind: "opaque", reason: err.message };
    throw err;
  } finally {
    tree.delete();
  }
}

/** A sequence of statements: the program, a list, a subshell or a `{ …; }` group. */
function statements(node: Node, out: CommandPart[], piped: boolean): void {
  for (const child of node.children) {
    if (!child.isNamed) {
      if (!LIST_TOKENS.has(child.type)) throw new Opaque(`operator ${child.type}`);
      continue;
    }
    if (child.type === "comment") continue;
    statement(child, out, piped);
  }
}

function statement(node: Node, out: CommandPart[], piped: boolean): void {
  switch (node.type) {
    case "command":
      out.push(simpleCommand(node, node.text, [], piped));
      return;
    case "list":
    case "subshell":
    case "compound_statement":
      statements(node, out, piped);
      return;
    case "pipeline": {
      let first = true;
      for (const child of node.children) {
        if (!child.isNamed) {
          if (!PIPE_TOKENS.has(child.type)) throw new Opaque(`operator ${child.type}`);
          continue;
        }
        statement(child, out, piped || !first);
        first = false;
      }
      return;
    }
    case "negated_command": {
      const inner = node.namedChildren.filter((c) => c.type !== "comment");
      if (inner.length !== 1) throw new Opaque("negation");
      statement(inner[0]!, out, piped);
      return;
    }
    case "redirected_statement": {
      const body = node.childForFieldName("body");
      const redirects = node.namedChildren.filter((c) => c.id !== body?.id);
      if (!body) throw new Opaque("redirection without a command");
      const fileRedirects = redirects.some((r) => !transparent(r));
      if (body.type === "command") {
        out.push(simpleCommand(body, node.text, redirects, piped));
        return;
      }
      // The grammar hangs `a && b > f` on the whole list although the shell applies it to `b`
      // alone; either way a redirection that touches a file is not judged part by part.
      if (fileRedirects) throw new Opaque("a group redirected to or from a file");
      statement(body, out, piped);
      return;
    }
    default:
      throw new Opaque(node.type.replace(/_/g, " "));
  }
}

function simpleCommand(node: Node, text: string, outerRedirects: Node[], piped: boolean): CommandPart {
  const argv: string[] = [];
  const plain: boolean[] = [];
  let fileRedirects = outerRedirects.some((r) => !transparent(r));
  let assignments = false;
  for (const child of node.children) {
    if (!child.isNamed) throw new Opaque(`token ${child.type}`);
    switch (child.type) {
      case "variable_assignment":
        literal(child.childForFieldName("value"));
        assignments = true;
        break;
      case "file_redirect":
      case "heredoc_redirect":
      case "herestring_redirect":
        if (!transparent(child)) fileRedirects = true;
        break;
      case "command_name": {
        const word = child.namedChildren;
        if (word.length !== 1) throw new Opaque("command name");
        const w = literal(word[0]!);
        argv.push(w.value);
        plain.push(w.plain);
        break;
      }
      case "comment":
        break;
      default: {
        const w = literal(child);
        argv.push(w.value);
        plain.push(w.plain);
      }
    }
  }
  if (argv.length === 0) throw new Opaque("no program");
  return { text, argv, plain, fileRedirects, assignments, piped };
}

/** A redirection that touches no file: descriptor duplication or closing, or /dev/null. */
function transparent(node: Node): boolean {
  if (node.type !== "file_redirect") return false;
  const ops = node.children.filter((c) => !c.isNamed);
  const targets = node.namedChildren.filter((c) => c.type !== "file_descriptor");
  const op = ops[0]?.type;
  if (ops.length !== 1 || op === undefined || !REDIRECT_OPS.has(op)) throw new Opaque("redirection");
  // The grammar swallows words after a redirection target (`echo >f a b`) into the redirection:
  // such a command's words cannot be trusted.
  if (targets.length > 1) throw new Opaque("words after a redirection");
  if (op === ">&-" || op === "<&-") return targets.length === 0;
  const target = targets[0];
  if (!target) throw new Opaque("redirection without a target");
  const value = literal(target).value;
  if (op === ">&" || op === "<&") return /^(\d+|-)$/.test(value);
  return value === "/dev/null";
}

/** A word's value after quote removal; anything that expands when run makes the command opaque. */
function literal(node: Node | null): { value: string; plain: boolean } {
  if (!node) return { value: "", plain: true };
  switch (node.type) {
    case "word": {
      const raw = node.text;
      return { value: unescapeBare(raw), plain: PLAIN_WORD.test(raw) };
    }
    case "number":
      return { value: node.text, plain: /^\d+$/.test(node.text) };
    case "raw_string":
      return { value: node.text.slice(1, -1), plain: false };
    case "string": {
      let value = "";
      for (const c of node.children) {
        if (c.type === '"') continue;
        if (c.type !== "string_content") throw new Opaque("expansion in a string");
        value += unescapeDoubleQuoted(c.text);
      }
      return { value, plain: false };
    }
    case "concatenation":
      return { value: node.namedChildren.map((c) => literal(c).value).join(""), plain: false };
    default:
      throw new Opaque(node.type.replace(/_/g, " "));
  }
}

function unescapeBare(s: string): string {
  return s.replace(/\\(\n|.)/gs, (_, c: string) => (c === "\n" ? "" : c));
}

function unescapeDoubleQuoted(s: string): string {
  return s.replace(/\\([\\"$`\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}
