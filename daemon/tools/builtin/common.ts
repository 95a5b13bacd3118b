/** Small pieces the built-in tools share. */
import { errorText } from "../../../shared/error-text.js";
import { resolve, sep } from "node:path";
import type { Access, ToolCallContent, ToolContext, ToolResult } from "../types.js";
import { displayPath, resolveReal } from "../workspace.js";

export function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

export function failure(output: string, content?: ToolCallContent[]): ToolResult {
  return content ? { output, failed: true, content } : { output, failed: true };
}

/** The absolute path a tool argument names, links followed; what access() and run() both use. */
export function absPath(ctx: Pick<ToolContext, "cwd">, p: string | undefined): string {
  return resolveReal(ctx.cwd, p === undefined || p === "" ? "." : p);
}

/** What a write of `p` touches: the path resolved (the boundary) and as named (protected names). */
export function writeAccess(ctx: Pick<ToolContext, "cwd">, p: string): Access {
  return { type: "write", paths: [absPath(ctx, p)], named: [resolve(ctx.cwd, p)] };
}

/** How a path is shown to the model and the user: relative under cwd, "." for cwd itself. */
export function show(cwd: string, abs: string): string {
  return abs === cwd ? "." : displayPath(cwd, abs);
}

export function shownPath(ctx: Pick<ToolContext, "cwd">, p: string | undefined): string {
  return show(ctx.cwd, absPath(ctx, p));
}

/** Turns a file-system error into one sentence the model can act on. */
export function fsErrorMessage(err: unknown, path: string): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case "ENOENT":
      return `No such file or directory: ${path}`;
    case "EISDIR":
      return `${path} is a directory, not a file`;
    case "ENOTDIR":
      return `${path} is not a directory (or a part of it is a file)`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: ${path}`;
    default:
      return errorText(err);
  }
}

export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Patterns and output use "/" whatever the platform. */
export function toPosix(p: string): string {
  return sep === "/" ? p : p.split(sep).join("/");
}
