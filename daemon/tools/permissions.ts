/**
 * The permission presets (DESIGN §6): which calls run, which ask, and what "always" remembers.
 *   read-only           reads inside the workspace run; everything else asks, once per call
 *   workspace-write     reads and edits inside the workspace run, but for a protected path
 *                       (protected-paths.ts: .git, hooks, editor and agent settings) which asks;
 *                       outside, every command and every MCP tool ask
 *   danger-full-access  nothing asks
 *
 * An "always" answer stores a grant that covers exactly what its option names, and the option's
 * name is built from that same grant. Grants live in this memory only: per session, never stored.
 */
import type { PermissionOption } from "@agentclientprotocol/sdk";
import { isInside } from "./workspace.js";
import { protectedName, PROTECTED_WHY, type ProtectedName } from "./protected-paths.js";
import type { Access } from "./types.js";
import { commandShape, type CommandPart, type CommandShape } from "./shell-syntax.js";
import { isDestructive, runsOtherCode } from "./command-risk.js";

export const PRESETS = ["read-only", "workspace-write", "danger-full-access"] as const;
export type Preset = (typeof PRESETS)[number];

export function isPreset(v: string): v is Preset {
  return (PRESETS as readonly string[]).includes(v);
}

export function needsApproval(preset: Preset, access: Access, roots: readonly string[]): boolean {
  if (preset === "danger-full-access" || access.type === "none") return false;
  switch (access.type) {
    case "read":
      return !access.paths.every((p) => isInside(p, roots));
    case "write":
      return preset === "read-only" || !access.paths.every((p) => isInside(p, roots)) || protectedWrite(access, roots) !== undefined;
    case "execute":
    case "fetch":
    case "mcp":
      // A server's hints are its own claim about itself: they pick the wording, never skip the question.
      return true;
  }
}

/**
 * The protected name a write falls under, judged on its paths as resolved and as named (a `.git`
 * that is itself a link to a folder elsewhere is protected by its name), or undefined.
 */
export function protectedWrite(access: Access, roots: readonly string[]): ProtectedName | undefined {
  if (access.type !== "write") return undefined;
  for (const p of [...access.paths, ...(access.named ?? [])]) {
    const name = protectedName(p, roots);
    if (name) return name;
  }
  return undefined;
}

/** What a question about a protected write says about why it asks (the call's title carries it). */
export function protectedNote(name: ProtectedName): string {
  return `protected path: ${PROTECTED_WHY[name]}`;
}

export type Decision = "allow" | "reject";

/** What one "always" answer covers. `tool` is the name the model calls. */
export type Scope =
  | { kind: "exact"; tool: string; command: string }
  | { kind: "prefix"; tool: string; words: string[] }
  | { kind: "paths"; tool: string; access: "read" | "write"; paths: string[] }
  | { kind: "mcp"; tool: string; server: string; name: string }
  | { kind: "host"; tool: string; host: string };

/** One grant as /status and `_reasonix.io/session/status` show it. */
export interface GrantView {
  decision: Decision;
  tool: string;
  match: "exact" | "prefix" | "read" | "write" | "mcp_tool" | "host";
  covers: string;
}

/** A prefix is the program and at most this many plain words after it. */
const MAX_PREFIX_WORDS = 2;
/** A subcommand-like word: not an option, a path, a file name or a pattern. */
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_:-]*$/;

/** Whether a prefix grant may cover this part at all. */
function prefixable(part: CommandPart): boolean {
  return !part.fileRedirects && !part.assignments && !isDestructive(part.argv) && !runsOtherCode(part.argv);
}

/**
 * The prefix a command can be granted by: a single simple command, neither destructive nor a
 * runner of other code, with no file redirection or variable assignment, written as its program
 * and one or two plain words (`npm test`, `npm run build`, `git status`). An option before them
 * (`git -c x push`, `ls -la`) means no prefix. Anything else is granted by its exact text only.
 */
export function commandPrefix(shape: CommandShape): string[] | undefined {
  if (shape.kind !== "parts" || shape.parts.length !== 1) return undefined;
  const part = shape.parts[0]!;
  if (part.piped || !prefixable(part) || !part.plain[0] || part.argv[0]!.startsWith("-")) return undefined;
  const words = [part.argv[0]!];
  for (let i = 1; i <= MAX_PREFIX_WORDS && i < part.argv.length; i++) {
    if (!part.plain[i] || !SUBCOMMAND.test(part.argv[i]!)) break;
    words.push(part.argv[i]!);
  }
  return words.length > 1 ? words : undefined;
}

/** `curl … | sh`: what runs depends on what the pipe carries, so only the whole exact text covers it. */
function wholeOnly(shape: CommandShape): boolean {
  return shape.kind !== "parts" || shape.parts.some((p) => p.piped && (runsOtherCode(p.argv) || isDestructive(p.argv)));
}

const startsWith = (argv: readonly string[], words: readonly string[]): boolean => words.every((w, i) => argv[i] === w);

function allows(scope: Scope, part: CommandPart): boolean {
  if (scope.kind === "exact") return scope.command === part.text;
  if (scope.kind === "prefix") return prefixable(part) && startsWith(part.argv, scope.words);
  return false;
}

/** A rejection may reach further than an allowance: any part it names refuses the whole command. */
function rejects(scope: Scope, part: CommandPart): boolean {
  if (scope.kind === "exact") return scope.command === part.text;
  if (scope.kind === "prefix") return startsWith(part.argv, scope.words);
  return false;
}

const MAX_SHOWN = 120;

/** How an option names a scope; the same words /status shows. */
export function scopeLabel(scope: Scope): string {
  switch (scope.kind) {
    case "exact":
      return scope.command.length > MAX_SHOWN || scope.command.includes("\n") ? "this exact command" : `\`${scope.command}\``;
    case "prefix":
      return `\`${scope.words.join(" ")} …\``;
    case "paths":
      return `${scope.tool} ${scope.access === "write" ? "writing" : "reading"} ${scope.paths.join(", ")}`;
    case "mcp":
      return `\`${scope.name}\` of MCP server \`${scope.server}\``;
    case "host":
      return `${scope.tool} from ${scope.host}`;
  }
}

/**
 * The answers offered; the "always" ones are named from the very scope they would store. For a
 * protected path they say so, and that the grant is that one path's.
 */
export function permissionOptions(scope: Scope | undefined, guarded?: ProtectedName): PermissionOption[] {
  const label = scope ? scopeLabel(scope) : undefined;
  const tail = guarded ? ` in this session (a protected path: ${guarded}; this path only)` : " in this session";
  return [
    { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
    ...(label ? [{ optionId: "allow_always", name: `Always allow ${label}${tail}`, kind: "allow_always" as const }] : []),
    { optionId: "reject_once", name: "Reject", kind: "reject_once" },
    ...(label ? [{ optionId: "reject_always", name: `Always reject ${label}${tail}`, kind: "reject_always" as const }] : []),
  ];
}

type Entry = { decision: Decision; scope: Scope };

export interface Judgement {
  /** A remembered answer that settles this call. */
  remembered: Decision | undefined;
  /** What an "always" answer to this call would store and name. */
  scope: Scope | undefined;
}

/** The session's allow_always / reject_always answers. Nothing here is ever written to the store. */
export class ApprovalMemory {
  private readonly entries = new Map<string, Entry>();

  async judge(tool: string, access: Access): Promise<Judgement> {
    switch (access.type) {
      case "execute": {
        const command = access.command.trim();
        const shape = await commandShape(command);
        const words = commandPrefix(shape);
        const scope: Scope = words ? { kind: "prefix", tool, words } : { kind: "exact", tool, command };
        return { remembered: this.commandDecision(tool, command, shape), scope };
      }
      case "read":
      case "write": {
        const scope: Scope = { kind: "paths", tool, access: access.type, paths: access.paths };
        const found = access.paths.map((p) => this.entries.get(pathKey(tool, access.type, p))?.decision);
        const remembered = found.includes("reject") ? "reject" : found.length > 0 && found.every((d) => d === "allow") ? "allow" : undefined;
        return { remembered, scope };
      }
      case "mcp": {
        const scope: Scope = { kind: "mcp", tool, server: access.server, name: access.name };
        return { remembered: this.entries.get(key(scope))?.decision, scope };
      }
      case "fetch": {
        const scope: Scope = { kind: "host", tool, host: access.host };
        return { remembered: this.entries.get(key(scope))?.decision, scope };
      }
      case "none":
        return { remembered: undefined, scope: undefined };
    }
  }

  remember(scope: Scope, decision: Decision): void {
    if (scope.kind === "paths") {
      for (const p of scope.paths) this.entries.set(pathKey(scope.tool, scope.access, p), { decision, scope: { ...scope, paths: [p] } });
      return;
    }
    this.entries.set(key(scope), { decision, scope });
  }

  grants(): GrantView[] {
    return [...this.entries.values()].map(({ decision, scope }): GrantView => {
      switch (scope.kind) {
        case "exact":
          return { decision, tool: scope.tool, match: "exact", covers: scope.command };
        case "prefix":
          return { decision, tool: scope.tool, match: "prefix", covers: `${scope.words.join(" ")} …` };
        case "paths":
          return { decision, tool: scope.tool, match: scope.access, covers: scope.paths.join(", ") };
        case "mcp":
          return { decision, tool: scope.tool, match: "mcp_tool", covers: `${scope.name} (MCP server ${scope.server})` };
        case "host":
          return { decision, tool: scope.tool, match: "host", covers: scope.host };
      }
    });
  }

  private commandDecision(tool: string, command: string, shape: CommandShape): Decision | undefined {
    const rules = [...this.entries.values()].filter((e) => e.scope.tool === tool && (e.scope.kind === "exact" || e.scope.kind === "prefix"));
    const whole = this.entries.get(key({ kind: "exact", tool, command }))?.decision;
    const parts = shape.kind === "parts" ? shape.parts : [];
    if (whole === "reject" || parts.some((p) => rules.some((r) => r.decision === "reject" && rejects(r.scope, p)))) return "reject";
    if (whole === "allow") return "allow";
    if (wholeOnly(shape)) return undefined;
    return parts.every((p) => rules.some((r) => r.decision === "allow" && allows(r.scope, p))) ? "allow" : undefined;
  }
}

function key(scope: Scope): string {
  switch (scope.kind) {
    case "exact":
      return `${scope.tool}\0exact\0${scope.command}`;
    case "prefix":
      return `${scope.tool}\0prefix\0${scope.words.join("\0")}`;
    case "paths":
      return scope.paths.map((p) => pathKey(scope.tool, scope.access, p)).join("\n");
    case "mcp":
      return `\0mcp\0${scope.server}\0${scope.name}`;
    case "host":
      return `${scope.tool}\0host\0${scope.host}`;
  }
}

function pathKey(tool: string, access: "read" | "write", path: string): string {
  return `${tool}\0${access}\0${path}`;
}
