/**
 * The permission presets (DESIGN §6): which calls run, which ask, and what "always" remembers.
 *   read-only           reads inside the workspace run; everything else asks, once per call
 *   workspace-write     reads and edits inside the workspace run; outside, and every command, asks
 *   danger-full-access  nothing asks
 */
import { isInside } from "./workspace.js";
import type { Access } from "./types.js";

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
      return preset === "read-only" || !access.paths.every((p) => isInside(p, roots));
    case "execute":
      return true;
  }
}

const SHELL_META = /[;&|`$()<>\n\\]/;

/**
 * The prefix an "always" answer covers: the program and its subcommand ("npm test", "git status").
 * A command with shell operators is only ever covered by its exact text, so approving
 * `echo hi` never approves `echo hi; rm -rf ~`.
 */
export function commandPrefix(command: string): string | undefined {
  const trimmed = command.trim();
  if (SHELL_META.test(trimmed)) return undefined;
  const words = trimmed.split(/\s+/);
  const prefix = [words[0]!];
  const second = words[1];
  if (second && /^[A-Za-z][\w:.-]*$/.test(second)) prefix.push(second);
  return prefix.join(" ");
}

type Decision = "allow" | "reject";

/** Remembers allow_always / reject_always answers for the life of a session. */
export class ApprovalMemory {
  private readonly rules = new Map<string, Decision>();

  private keys(tool: string, access: Access): string[] {
    switch (access.type) {
      case "execute": {
        const prefix = commandPrefix(access.command);
        return [`${tool}\0exact\0${access.command.trim()}`, ...(prefix ? [`${tool}\0prefix\0${prefix}`] : [])];
      }
      case "read":
      case "write":
        return access.paths.map((p) => `${tool}\0${access.type}\0${p}`);
      case "none":
        return [];
    }
  }

  lookup(tool: string, access: Access): Decision | undefined {
    const keys = this.keys(tool, access);
    if (keys.length === 0) return undefined;
    if (keys.some((k) => this.rules.get(k) === "reject")) return "reject";
    if (access.type === "execute") {
      const exact = this.rules.get(keys[0]!);
      if (exact) return exact;
      const prefix = commandPrefix(access.command);
      return prefix ? this.rules.get(`${tool}\0prefix\0${prefix}`) : undefined;
    }
    return keys.every((k) => this.rules.get(k) === "allow") ? "allow" : undefined;
  }

  remember(tool: string, access: Access, decision: Decision): void {
    for (const k of this.keys(tool, access)) this.rules.set(k, decision);
  }
}
