/**
 * Plugin actions as slash commands: listing them for available_commands_update and running them.
 * Surfaces are returned as data; whether they reach the client structured or as text is the
 * caller's choice (see surface-text.ts), so this module knows nothing about ACP.
 */
import { accessSync, constants, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { expandTemplate, splitArgs } from "../commands/custom.js";
import type { PluginCommand } from "../commands/registry.js";
import { formatIssues, Surface, type Plugin, type PluginAction, type StatusSurface } from "./manifest.js";
import type { Sandbox } from "../tools/sandbox.js";
import { spawnCommand } from "../tools/lifeline.js";
import { withUmask } from "../tools/umask.js";

export type ActionResult = { kind: "surface"; surface: Surface } | { kind: "prompt"; text: string } | undefined;

export interface RunActionOptions {
  /** The complete environment of a run action's process; nothing is inherited implicitly. */
  env: Record<string, string | undefined>;
  /** The session's umask (tools/umask.ts): a run action's process starts with it. */
  umask: number;
  signal?: AbortSignal;
  /** The session's sandbox for a run action, its own folder readable in it; undefined: unconfined. */
  sandbox?: (pluginDir: string) => Promise<Sandbox | undefined>;
}

const STDOUT_MAX = 64 * 1024;
const STDERR_TAIL = 4 * 1024;
const DEFAULT_TIMEOUT_SECONDS = 30;
const KILL_GRACE_MS = 2000;

/** `$$` is an escaped dollar, so `$$1` is not an argument reference. */
function usesArguments(template: string): boolean {
  for (const m of template.matchAll(/\$(\$|ARGUMENTS|[1-9])/g)) if (m[1] !== "$") return true;
  return false;
}

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === "object") return Object.values(value).flatMap(strings);
  return [];
}

function mapStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, f)]));
  return value;
}

function takesArguments(action: PluginAction): boolean {
  return action.run !== undefined || strings([action.surface, action.prompt]).some(usesArguments);
}

export function pluginCommands(plugins: readonly Plugin[]): PluginCommand[] {
  const out: PluginCommand[] = [];
  for (const p of plugins) {
    for (const a of p.actions) {
      const hint = a.hint ?? (takesArguments(a) ? "arguments" : undefined);
      out.push({
        name: `${p.name}:${a.name}`,
        description: a.description ?? `Run the ${p.name} ${a.name} action`,
        ...(hint ? { hint } : {}),
        ...(a.prompt !== undefined ? { prompt: a.prompt } : {}),
      });
    }
  }
  return out.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}

function errorSurface(title: string, text: string): StatusSurface {
  return { type: "status", title, state: "error", text };
}

/**
 * Every string of a static surface is a template, but unlike prompts the unused arguments are not
 * appended: a card title would otherwise grow whatever the user typed after the command.
 */
export function expandSurface(surface: Surface, args: string, title: string): Surface {
  const expanded = mapStrings(surface, (s) => expandTemplate(s, usesArguments(s) ? args : ""));
  // Expansion can empty a title or break a form default, so the result is checked again.
  const parsed = Surface.safeParse(expanded);
  return parsed.success ? parsed.data : errorSurface(title, `The surface is invalid after expanding arguments: ${formatIssues(parsed.error.issues)}`);
}

export async function runAction(plugins: readonly Plugin[], name: string, args: string, opts: RunActionOptions): Promise<ActionResult> {
  const colon = name.indexOf(":");
  if (colon < 0) return undefined;
  const plugin = plugins.find((p) => p.name === name.slice(0, colon));
  const action = plugin?.actions.find((a) => a.name === name.slice(colon + 1));
  if (!plugin || !action) return undefined;
  if (action.surface) return { kind: "surface", surface: expandSurface(action.surface, args, name) };
  if (action.prompt !== undefined) return { kind: "prompt", text: expandTemplate(action.prompt, args) };
  return { kind: "surface", surface: await runProcess(plugin, action, name, args, opts, await opts.sandbox?.(plugin.dir)) };
}

/** Plain text becomes a card; a JSON object must be a valid surface, since it was meant as one. */
function surfaceFromStdout(stdout: string, truncated: boolean, title: string): Surface {
  const trimmed = stdout.trim();
  if (!truncated && trimmed.startsWith("{")) {
    let raw: unknown;
    try {
      raw = JSON.parse(trimmed);
    } catch {
      raw = undefined;
    }
    if (raw !== undefined) {
      const parsed = Surface.safeParse(raw);
      return parsed.success ? parsed.data : errorSurface(title, `The action printed an invalid surface: ${formatIssues(parsed.error.issues)}`);
    }
  }
  const body = trimmed === "" ? "(no output)" : truncated ? `${trimmed}\n\n[output truncated at ${STDOUT_MAX} bytes]` : trimmed;
  return { type: "card", title, body };
}

/** Signals the action's whole process group, so helpers it started cannot outlive it. */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Whether spawn would find `command` (through PATH unless it names a path): the shell that sets the
 * umask execs it, and a shell that cannot only exits 127, like a program that ran and failed.
 */
function startable(command: string, cwd: string, path: string | undefined): boolean {
  const candidates = command.includes("/") ? [resolve(cwd, command)] : (path ?? "").split(":").map((dir) => join(resolve(cwd, dir), command));
  return candidates.some((p) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  });
}

function runProcess(plugin: Plugin, action: PluginAction, title: string, args: string, opts: RunActionOptions, sandbox: Sandbox | undefined): Promise<Surface> {
  const [command, ...fixed] = action.run!;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
  // The raw argument string too: splitting loses the user's exact quoting.
  Object.assign(env, { REASONIX_PLUGIN: plugin.name, REASONIX_ACTION: action.name, REASONIX_ARGUMENTS: args });
  const timeoutMs = (action.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
  if (opts.signal?.aborted) return Promise.resolve(errorSurface(title, "Cancelled."));
  if (!startable(command!, plugin.dir, env.PATH)) return Promise.resolve(errorSurface(title, `Could not start \`${command}\`: no such executable program`));

  return new Promise<Surface>((resolve) => {
    const argv = withUmask([command!, ...fixed, ...splitArgs(args)], opts.umask);
    const child = spawnCommand(sandbox ? sandbox.wrap(argv, plugin.dir, { lifeline: true }) : { file: argv[0]!, args: argv.slice(1) }, {
      cwd: plugin.dir,
      env,
    });
    const stdout: Buffer[] = [];
    let stdoutLen = 0;
    let truncated = false;
    let stderr = Buffer.alloc(0);
    let stopped: "timeout" | "cancel" | undefined;
    let settled = false;

    const stop = (why: "timeout" | "cancel") => {
      if (stopped || child.pid === undefined) return;
      stopped = why;
      const pid = child.pid;
      killGroup(pid, "SIGTERM");
      setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS).unref();
    };
    const onAbort = () => stop("cancel");
    const timer = setTimeout(() => stop("timeout"), timeoutMs);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = (surface: Surface) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      resolve(surface);
    };

    child.stdout.on("data", (chunk: Buffer) => {
      const room = STDOUT_MAX - stdoutLen;
      if (chunk.length > room) truncated = true;
      if (room <= 0) return;
      stdout.push(chunk.subarray(0, room));
      stdoutLen += Math.min(room, chunk.length);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk]);
      if (stderr.length > STDERR_TAIL) stderr = stderr.subarray(stderr.length - STDERR_TAIL);
    });
    // Background jobs left by a finished action would hold our pipes open until the timeout.
    child.on("exit", () => {
      if (child.pid !== undefined) killGroup(child.pid, "SIGKILL");
    });
    child.on("error", (err) => finish(errorSurface(title, `Could not start \`${command}\`: ${err.message}`)));
    child.on("close", (code, sig) => {
      const tail = stderr.toString("utf8").trim();
      const withTail = (text: string) => (tail ? `${text}\n\n\`\`\`\n${tail}\n\`\`\`` : text);
      if (stopped === "timeout") return finish(errorSurface(title, withTail(`Timed out after ${timeoutMs / 1000} s.`)));
      if (stopped === "cancel") return finish(errorSurface(title, withTail("Cancelled.")));
      if (code !== 0) return finish(errorSurface(title, withTail(code === null ? `Killed by ${sig ?? "a signal"}.` : `Exited with code ${code}.`)));
      finish(surfaceFromStdout(Buffer.concat(stdout).toString("utf8"), truncated, title));
    });
  });
}
