/**
 * Project instructions: `AGENTS.md` (the convention several agents share), `CLAUDE.md` (Claude
 * Code's, the most common in the wild) and `REASONIX.md`, from
 * the repository root down to the workspace folder, after the user's own file in the config folder.
 * The order is fixed (general first, the workspace's own last, so the nearest file has the last
 * word) and each text is shown with its path, so the model knows where a rule comes from.
 *
 * Each file is read only when its real path stays where it belongs: the project's inside the
 * repository root or the session's folders, the user's inside the config folder. A repository's
 * `AGENTS.md` may be a link to `/proc/self/environ` or to a key beside it; what is read here goes
 * to the provider with every request and into the store. A link that leaves is skipped and named.
 */
import { stat } from "node:fs/promises";
import { CONFIG_BOUNDARY, type Head, OutsideError, outsideNotice, PROJECT_BOUNDARY, readHead } from "../tools/read-head.js";
import { displayPath, mayExistBelow, resolveReal } from "../tools/workspace.js";
import { dirname, join } from "node:path";

/** In each folder in this order: the shared convention, Claude Code's, then this agent's own (the last word). */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md", "REASONIX.md"] as const;
/** One file past this is clipped: instructions ride in every request of the session. */
export const MAX_INSTRUCTION_CHARS = 32_000;

export interface InstructionFile {
  path: string;
  text: string;
  clipped: boolean;
}

export interface Instructions {
  files: InstructionFile[];
  /** One line per file skipped because it links outside, for the user (never the model). */
  skipped: string[];
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A session's start asks the same question from its prompt, skills and hooks at once: callers in
 * the same moment share one walk of the file system, and the answer is forgotten as it settles, so
 * a later call (after a `git init`, a moved link) looks again.
 */
function sharedWhileWalking<T>(walking: Map<string, Promise<T>>, key: string, walk: () => Promise<T>): Promise<T> {
  const inFlight = walking.get(key);
  if (inFlight) return inFlight;
  const answer = walk().finally(() => walking.delete(key));
  walking.set(key, answer);
  return answer;
}

const rootWalks = new Map<string, Promise<string | undefined>>();
const boundWalks = new Map<string, Promise<readonly string[]>>();

/** The nearest folder at or above `dir` holding `.git` (a folder, or a worktree's file); else undefined. */
export function repositoryRoot(dir: string): Promise<string | undefined> {
  return sharedWhileWalking(rootWalks, dir, async () => {
    for (let at = dir; ; at = dirname(at)) {
      if (await exists(join(at, ".git"))) return at;
      if (dirname(at) === at) return undefined;
    }
  });
}

/**
 * Where the project's own files (instructions, command folders, git metadata) may really live: the
 * repository root, cwd and the additional directories, links resolved.
 */
export function projectBounds(cwd: string, additionalDirectories: readonly string[]): Promise<readonly string[]> {
  return sharedWhileWalking(boundWalks, [cwd, ...additionalDirectories].join("\0"), async () => {
    const root = await repositoryRoot(cwd);
    return [...new Set([...(root ? [root] : []), cwd, ...additionalDirectories].map((d) => resolveReal("/", d)))];
  });
}

/** The folders whose files count, root first: the repository root down to `cwd` (or `cwd` alone outside a repository). */
export async function instructionFolders(cwd: string): Promise<string[]> {
  const root = await repositoryRoot(cwd);
  if (!root) return [cwd];
  const folders: string[] = [];
  for (let at = cwd; ; at = dirname(at)) {
    folders.unshift(at);
    if (at === root || dirname(at) === at) break;
  }
  return folders;
}

type Read = InstructionFile | { skipped: string } | undefined;

async function readInstruction(path: string, inside: readonly string[], shown: string, boundary: string): Promise<Read> {
  if (!mayExistBelow(dirname(path), path)) return undefined;
  let head: Head | undefined;
  try {
    // Four bytes a character at the most, and one more character: a file that goes on is clipped below.
    head = await readHead(path, (MAX_INSTRUCTION_CHARS + 1) * 4, inside);
  } catch (err) {
    return err instanceof OutsideError ? { skipped: outsideNotice(shown, boundary, err.real) } : undefined;
  }
  if (!head) return undefined;
  const text = head.text.replace(/^\uFEFF/, "").trimEnd();
  if (text.trim() === "") return undefined;
  const clipped = text.length > MAX_INSTRUCTION_CHARS || !head.complete;
  return { path, text: clipped ? text.slice(0, MAX_INSTRUCTION_CHARS) : text, clipped };
}

/**
 * Every instruction file that exists and stays inside, in the fixed order: the user's, then the
 * repository root's … the workspace's; and a line for each one skipped because it links outside.
 */
export async function loadInstructions(cwd: string, configDir: string, additionalDirectories: readonly string[] = []): Promise<Instructions> {
  const project = await projectBounds(cwd, additionalDirectories);
  const user = [resolveReal("/", configDir)];
  // A workspace that is the config folder itself would otherwise list its files twice.
  const folders = [...new Set([configDir, ...(await instructionFolders(cwd))])];
  const found = await Promise.all(
    folders.flatMap((dir) =>
      INSTRUCTION_FILES.map((name) => {
        const path = join(dir, name);
        return dir === configDir
          ? readInstruction(path, user, path, CONFIG_BOUNDARY)
          : readInstruction(path, project, displayPath(cwd, path), PROJECT_BOUNDARY);
      }),
    ),
  );
  const files: InstructionFile[] = [];
  const skipped: string[] = [];
  // `CLAUDE.md` is often a link to, or a copy of, the `AGENTS.md` beside it: one text, said once.
  const said = new Set<string>();
  for (const f of found) {
    if (f && "skipped" in f) skipped.push(f.skipped);
    else if (f && !said.has(`${dirname(f.path)}\0${f.text}`)) {
      said.add(`${dirname(f.path)}\0${f.text}`);
      files.push(f);
    }
  }
  return { files, skipped };
}
