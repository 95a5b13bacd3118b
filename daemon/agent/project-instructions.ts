/**
 * Project instructions: `AGENTS.md` (the convention several agents share) and `REASONIX.md`, from
 * the repository root down to the workspace folder, after the user's own file in the config folder.
 * The order is fixed (general first, the workspace's own last, so the nearest file has the last
 * word) and each text is shown with its path, so the model knows where a rule comes from.
 */
import { stat } from "node:fs/promises";
import { type Head, readHead } from "../tools/read-head.js";
import { dirname, join } from "node:path";

export const INSTRUCTION_FILES = ["AGENTS.md", "REASONIX.md"] as const;
/** One file past this is clipped: instructions ride in every request of the session. */
export const MAX_INSTRUCTION_CHARS = 32_000;

export interface InstructionFile {
  path: string;
  text: string;
  clipped: boolean;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The nearest folder at or above `dir` holding `.git` (a folder, or a worktree's file); else undefined. */
export async function repositoryRoot(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    if (await exists(join(at, ".git"))) return at;
    if (dirname(at) === at) return undefined;
  }
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

async function readInstruction(path: string): Promise<InstructionFile | undefined> {
  let head: Head | undefined;
  try {
    // Four bytes a character at the most, and one more character: a file that goes on is clipped below.
    head = await readHead(path, (MAX_INSTRUCTION_CHARS + 1) * 4);
  } catch {
    return undefined;
  }
  if (!head) return undefined;
  const text = head.text.replace(/^\uFEFF/, "").trimEnd();
  if (text.trim() === "") return undefined;
  const clipped = text.length > MAX_INSTRUCTION_CHARS || !head.complete;
  return { path, text: clipped ? text.slice(0, MAX_INSTRUCTION_CHARS) : text, clipped };
}

/** Every instruction file that exists, in the fixed order: the user's, then the repository root's … the workspace's. */
export async function loadInstructions(cwd: string, configDir: string): Promise<InstructionFile[]> {
  // A workspace that is the config folder itself would otherwise list its files twice.
  const folders = [...new Set([configDir, ...(await instructionFolders(cwd))])];
  const candidates = folders.flatMap((dir) => INSTRUCTION_FILES.map((name) => join(dir, name)));
  const found = await Promise.all(candidates.map(readInstruction));
  return found.filter((f): f is InstructionFile => f !== undefined);
}
