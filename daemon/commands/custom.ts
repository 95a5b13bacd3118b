/**
 * Custom slash commands: markdown files in `<config>/commands/` and `<cwd>/.reasonix/commands/`.
 * The name comes from the path (`git/commit.md` → `git:commit`); front-matter gives `description`
 * and `argument-hint`; the body is a template (`$ARGUMENTS`, `$1`…`$9`, `$$` for a dollar sign).
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { type Head, OutsideError, outsideNotice, readHead, realPathInside } from "../tools/read-head.js";
import { mayExistBelow } from "../tools/workspace.js";

export interface CustomCommand {
  name: string;
  description: string;
  hint: string | undefined;
  body: string;
  source: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
const KEY = /^[A-Za-z][\w-]*$/;

/** A command file larger than this is not a command (the project may come from anywhere). */
export const MAX_COMMAND_BYTES = 256 * 1024;

/**
 * A folder of command files and where its files may really lie: the project's folder may be a link
 * to `/usr`, and a file in it a link to a key; neither becomes a command.
 */
export interface CommandDir {
  dir: string;
  /** The folder `dir` lies in, already in use (mayExistBelow): the config folder, the workspace. */
  base: string;
  /** Real paths; the folder, or a file in it, whose real path lies elsewhere is skipped. */
  inside: readonly string[];
  /** How a notice names those folders ("the config folder", …). */
  boundary: string;
}

export interface LoadedCommands {
  commands: CustomCommand[];
  /** One line per folder or file skipped because it links outside, for the user. */
  skipped: string[];
}

/** The folder's markdown files (links too: each is checked where it leads when it is read), relative to it. */
async function markdownFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith(".md"))
    .map((e) => relative(dir, join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)));
}

/** YAML's block scalars: `>` folds the indented lines below into one, `|` keeps their line breaks. */
const BLOCK = new Set([">", ">-", ">+", "|", "|-", "|+"]);

/**
 * A small front-matter reader: `key: value` lines between `---` fences, values optionally quoted,
 * or a block scalar (`description: >` and indented lines, as many SKILL.md files write it).
 * Indented lines under any other key (a nested map) are left out.
 */
export function parseFrontMatter(text: string): { meta: Record<string, string>; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return { meta: {}, body: text };
  const meta: Record<string, string> = {};
  const lines = m[1]!.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // Split at the first colon, not with /^(key)\s*:\s*(.*)$/: over a file's text that pattern tried
    // every split of a blank run between \s* and .* (a second for 32 000 spaces before a U+2028).
    const colon = line.indexOf(":");
    const key = line.slice(0, Math.max(0, colon)).trimEnd();
    if (colon < 0 || !KEY.test(key)) continue;
    let value = line.slice(colon + 1).trim();
    if (BLOCK.has(value)) {
      const block: string[] = [];
      while (i + 1 < lines.length && (lines[i + 1]!.trim() === "" || lines[i + 1]!.startsWith(" ") || lines[i + 1]!.startsWith("\t")))
        block.push(lines[++i]!.trim());
      value = block.join(value.startsWith(">") ? " " : "\n").trim();
    } else if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1);
    meta[key.toLowerCase()] = value;
  }
  return { meta, body: text.slice(m[0].length) };
}

/** Later folders win over earlier ones, so a project command overrides a user command of the same name. */
export async function loadCustomCommands(dirs: readonly CommandDir[]): Promise<LoadedCommands> {
  const byName = new Map<string, CustomCommand>();
  const skipped: string[] = [];
  for (const { dir, base, inside, boundary } of dirs) {
    if (!mayExistBelow(base, dir)) continue;
    let real: string;
    try {
      real = await realPathInside(dir, inside);
    } catch (err) {
      if (err instanceof OutsideError) skipped.push(outsideNotice(dir, boundary, err.real));
      continue;
    }
    // The folder as checked, not the path again: a link swapped in meanwhile is not followed.
    for (const rel of (await markdownFiles(real)).sort()) {
      const name = rel.slice(0, -".md".length).split(sep).join(":");
      if (!NAME.test(name)) continue;
      const file = join(real, rel);
      let head: Head | undefined;
      try {
        head = await readHead(file, MAX_COMMAND_BYTES, inside);
      } catch (err) {
        if (err instanceof OutsideError) skipped.push(outsideNotice(join(dir, rel), boundary, err.real));
        continue;
      }
      // Read at every turn: a template past the bound is left out rather than cut somewhere inside.
      if (!head?.complete) continue;
      const { meta, body } = parseFrontMatter(head.text);
      byName.set(name, {
        name,
        description: meta.description || `Run the ${name} command`,
        hint: meta["argument-hint"] || undefined,
        body: body.trim(),
        source: file,
      });
    }
  }
  return { commands: [...byName.values()].sort((a, b) => a.name.localeCompare(b.name)), skipped };
}

/** Splits arguments like a shell would for positional use: quotes group, backslash escapes. */
export function splitArgs(args: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(args))) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  return out;
}

export function expandTemplate(body: string, args: string): string {
  const positional = splitArgs(args);
  const expanded = body.replace(/\$(\$|ARGUMENTS|[1-9])/g, (_, key: string) => {
    if (key === "$") return "$";
    if (key === "ARGUMENTS") return args;
    return positional[Number(key) - 1] ?? "";
  });
  // A template that never mentions its arguments still passes them on.
  return /\$(ARGUMENTS|[1-9])/.test(body) || args.trim() === "" ? expanded : `${expanded}\n\n${args}`;
}

/** `/name rest` → {name, args}; anything else is not a command. */
export function parseSlash(text: string): { name: string; args: string } | undefined {
  const m = /^\/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return m ? { name: m[1]!, args: (m[2] ?? "").trim() } : undefined;
}
