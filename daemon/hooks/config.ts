/**
 * Hook configuration in Claude Code's schema, from the user's `<config>/settings.json` and the
 * project's `.reasonix/settings.json` and `.claude/settings.json` (the user's first, so theirs run
 * first). Only the `hooks` key is ours to read; the rest of such a file belongs to other tools.
 *
 * A project's file is read only when its real path lies inside the repository and the session's
 * folders (`projectBounds`, as instruction files and custom commands are), the user's inside the
 * config folder. A file that is not JSON or not of the schema is named to the user and left out;
 * the others still count.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { projectBounds, repositoryRoot } from "../agent/project-instructions.js";
import { CONFIG_BOUNDARY, OutsideError, outsideNotice, PROJECT_BOUNDARY, readHead } from "../tools/read-head.js";
import { displayPath, resolveReal } from "../tools/workspace.js";
import { errorText } from "../../shared/error-text.js";

export const HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Claude Code's default bound for one hook, in seconds. */
export const DEFAULT_HOOK_TIMEOUT_S = 60;
/** A settings file past this is not read (it is configuration, not data). */
const MAX_SETTINGS_BYTES = 1024 * 1024;

const HookEntry = z.object({
  type: z.string(),
  command: z.string().min(1).optional(),
  timeout: z.number().positive().max(86_400).optional(),
});
const MatcherGroup = z.object({ matcher: z.string().optional(), hooks: z.array(HookEntry) });
/** Events we do not run (Notification, PreCompact, …) are accepted and left out. */
const Settings = z.object({ hooks: z.record(z.string(), z.array(MatcherGroup)).optional() });

export interface Hook {
  event: HookEvent;
  /** undefined, "" and "*" match everything. */
  matcher: string | undefined;
  command: string;
  timeoutMs: number;
  /** The file it came from, as shown to the user. */
  source: string;
  project: boolean;
}

export interface HookConfig {
  hooks: Hook[];
  /** The project's hooks' files, for the trust question's hash: path and text, in reading order. */
  projectFiles: Array<{ path: string; text: string }>;
  /** Lines for the user: files left out (malformed, linking outside) and entries skipped. */
  problems: string[];
  /** Where the project's trust answer is kept: the repository root (the workspace outside one), real. */
  repository: string;
}

/** The project's settings files, in the order their hooks run: `.reasonix` then `.claude`. */
export const PROJECT_SETTINGS = [join(".reasonix", "settings.json"), join(".claude", "settings.json")] as const;

function fromFile(text: string, source: string, project: boolean, problems: string[]): Hook[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    problems.push(`Ignored ${source}: it is not valid JSON (${errorText(err)}).`);
    return [];
  }
  const parsed = Settings.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    problems.push(`Ignored ${source}: ${issue ? `${issue.path.join(".") || "(top)"}: ${issue.message}` : "not of the settings schema"}.`);
    return [];
  }
  const hooks: Hook[] = [];
  for (const [event, groups] of Object.entries(parsed.data.hooks ?? {})) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) continue;
    for (const group of groups)
      for (const entry of group.hooks) {
        if (entry.type !== "command" || !entry.command) {
          problems.push(`Skipped a ${event} hook in ${source}: only {"type": "command", "command": …} hooks run here.`);
          continue;
        }
        const timeoutMs = (entry.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000;
        hooks.push({ event: event as HookEvent, matcher: group.matcher, command: entry.command, timeoutMs, source, project });
      }
  }
  return hooks;
}

async function readSettings(path: string, inside: readonly string[], shown: string, boundary: string, problems: string[]): Promise<string | undefined> {
  try {
    const head = await readHead(path, MAX_SETTINGS_BYTES, inside);
    if (head && !head.complete) {
      problems.push(`Ignored ${shown}: it is larger than ${MAX_SETTINGS_BYTES / 1024} KiB.`);
      return undefined;
    }
    return head?.text;
  } catch (err) {
    if (err instanceof OutsideError) problems.push(outsideNotice(shown, boundary, err.real));
    return undefined;
  }
}

/** Where a session's project settings are: found once per session, as its command folders are. */
export interface HookPlace {
  cwd: string;
  /** The repository root, else cwd. */
  root: string;
  /** Real folders the project's files may lie in (`projectBounds`). */
  bounds: readonly string[];
}

export async function hookPlace(cwd: string, additionalDirectories: readonly string[]): Promise<HookPlace> {
  return { cwd, root: (await repositoryRoot(cwd)) ?? cwd, bounds: await projectBounds(cwd, additionalDirectories) };
}

/** The user's hooks, then the project's; nothing is run or trusted here. */
export async function loadHookConfig(configDir: string, { cwd, root, bounds }: HookPlace): Promise<HookConfig> {
  const problems: string[] = [];
  const userPath = join(configDir, "settings.json");
  const userText = await readSettings(userPath, [resolveReal("/", configDir)], userPath, CONFIG_BOUNDARY, problems);
  const hooks = userText === undefined ? [] : fromFile(userText, userPath, false, problems);
  const projectFiles: HookConfig["projectFiles"] = [];
  for (const relative of PROJECT_SETTINGS) {
    const path = join(root, relative);
    const shown = displayPath(cwd, path);
    const text = await readSettings(path, bounds, shown, PROJECT_BOUNDARY, problems);
    if (text === undefined) continue;
    const found = fromFile(text, shown, true, problems);
    // A file without hooks asks nothing: only what would run needs the user's trust.
    if (found.length === 0) continue;
    hooks.push(...found);
    projectFiles.push({ path, text });
  }
  return { hooks, projectFiles, problems, repository: resolveReal("/", root) };
}

/** What the trust answer is kept for: the project's hook files' paths and bytes. */
export function projectHash(config: HookConfig): string {
  const hash = createHash("sha256");
  for (const f of config.projectFiles) hash.update(`${f.path}\0${f.text}\0`);
  return hash.digest("hex");
}

/**
 * Whether a hook's matcher takes this name (ours or Claude Code's for the same tool). A matcher is
 * a regular expression over the whole name, or, when it is not one, the name itself; it meets
 * only tool names (short and ours), never untrusted text.
 */
export function matches(matcher: string | undefined, names: readonly string[]): boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  let pattern: RegExp | undefined;
  try {
    pattern = new RegExp(`^(?:${matcher})$`);
  } catch {
    pattern = undefined;
  }
  return names.some((n) => (pattern ? pattern.test(n) : n === matcher));
}

/** Claude Code's names for our tools: its hooks' matchers and scripts use them. */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  run_command: "Bash",
  edit_file: "Edit",
  multi_edit: "MultiEdit",
  write_file: "Write",
  read_file: "Read",
  grep: "Grep",
  glob: "Glob",
  list_directory: "LS",
  web_fetch: "WebFetch",
  todo_write: "TodoWrite",
  task: "Task",
};
