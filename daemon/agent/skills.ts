/**
 * Agent Skills (the format Claude Code, Codex, Gemini CLI and others read): a folder holding a
 * `SKILL.md` whose front matter gives `name` and `description`, and any files the skill uses. The
 * system prompt lists each skill's name, description and folder; the body is read only when the
 * model calls the `skill` tool, so a skill costs the prompt one line until it is used.
 *
 * The folders come from the repository and the user's home, so they are read like instruction
 * files: by real path, inside where they belong (a skill folder that links to `/etc` is skipped and
 * named), never more than a bounded number of entries and bytes — a hostile repository can hold a
 * 1 GB `SKILL.md` or 100,000 skill folders.
 */
import type { Dir } from "node:fs";
import { lstat, opendir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, relative } from "node:path";
import { parseFrontMatter } from "../commands/custom.js";
import { CONFIG_BOUNDARY, type Head, OutsideError, outsideNotice, PROJECT_BOUNDARY, readHead, realPathInside } from "../tools/read-head.js";
import type { SkillLibrary, SkillRead } from "../tools/types.js";
import { displayPath, mayExistBelow, resolveReal } from "../tools/workspace.js";
import { projectBounds, repositoryRoot } from "./project-instructions.js";

/** At most this many skills are listed (and offered to the tool); the rest are named in a notice. */
export const MAX_SKILLS = 100;
/** Entries of one skills folder looked at; a folder with more is read this far only. */
export const MAX_SKILL_ENTRIES = 256;
/** The front matter must end within this much of `SKILL.md` to list the skill. */
export const MAX_SKILL_HEAD_BYTES = 8 * 1024;
/** The body the tool returns is cut here (a skill is read into the model's context whole). */
export const MAX_SKILL_BODY_BYTES = 128 * 1024;
export const MAX_DESCRIPTION_CHARS = 1024;
/** Files of a skill's folder the tool lists, and the entries it looks at to find them. */
export const MAX_SKILL_FILES = 100;
const MAX_LISTED_ENTRIES = 1000;
const MAX_LISTED_DEPTH = 4;
/** Notices about skipped skills past this many are counted, not each named. */
const MAX_NOTICES = 20;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

export interface Skill {
  name: string;
  description: string;
  /** The skill's folder as found (not through its real path), absolute. */
  folder: string;
  /** How the prompt and `/skills` name the folder: relative to the workspace for the project's. */
  shown: string;
  /** Where the folder's files must really lie. */
  inside: readonly string[];
}

export interface SkillSet {
  skills: Skill[];
  /** Skills left out because a more specific folder has one of the same name. */
  hidden: Array<{ name: string; shown: string; by: string }>;
  /** Lines for the user: files skipped (bad front matter, links outside) and bounds reached. */
  notices: string[];
}

/** Where a session's skills live, and what a project or user folder may hold. */
export interface SkillPlace {
  cwd: string;
  additionalDirectories: readonly string[];
}

interface SkillRoot {
  dir: string;
  /** The folder `dir` lies in, already in use (mayExistBelow): the repository root, the config folder, home. */
  base: string;
  inside: readonly string[];
  boundary: string;
  project: boolean;
}

/**
 * The skills folders, most specific first (the first holding a name wins): the repository's
 * `.reasonix/skills` (this agent's own), `.claude/skills`, `.agents/skills` (shared by several
 * agents), then the user's `<config>/skills` and `~/.agents/skills`. The repository root is the
 * nearest folder up with `.git`, or the workspace outside a repository.
 */
export async function skillRoots(place: SkillPlace, configDir: string, home = homedir()): Promise<SkillRoot[]> {
  const root = (await repositoryRoot(place.cwd)) ?? place.cwd;
  const project = await projectBounds(place.cwd, place.additionalDirectories);
  const agents = join(home, ".agents");
  return [
    ...[".reasonix", ".claude", ".agents"].map((d) => ({
      dir: join(root, d, "skills"),
      base: root,
      inside: project,
      boundary: PROJECT_BOUNDARY,
      project: true,
    })),
    { dir: join(configDir, "skills"), base: configDir, inside: [resolveReal("/", configDir)], boundary: CONFIG_BOUNDARY, project: false },
    { dir: join(agents, "skills"), base: home, inside: [resolveReal("/", agents)], boundary: "~/.agents", project: false },
  ];
}

/** The first MAX_SKILL_ENTRIES names in a folder, sorted; and whether there were more. */
async function entryNames(real: string): Promise<{ names: string[]; more: boolean }> {
  let dir: Dir;
  try {
    dir = await opendir(real);
  } catch {
    return { names: [], more: false };
  }
  const names: string[] = [];
  let more = false;
  try {
    for await (const e of dir) {
      if (names.length === MAX_SKILL_ENTRIES) {
        more = true;
        break;
      }
      if (e.isDirectory() || e.isSymbolicLink()) names.push(e.name);
    }
  } finally {
    await dir.close().catch(() => undefined);
  }
  return { names: names.sort(), more };
}

type Found = { skill: Skill } | { notice: string } | undefined;

async function readSkill(root: SkillRoot, real: string, entry: string, cwd: string): Promise<Found> {
  const folder = join(root.dir, entry);
  const shown = root.project ? displayPath(cwd, folder) : folder;
  const file = join(shown, "SKILL.md");
  let head: Head | undefined;
  try {
    head = await readHead(join(real, entry, "SKILL.md"), MAX_SKILL_HEAD_BYTES, root.inside);
  } catch (err) {
    return err instanceof OutsideError ? { notice: outsideNotice(file, root.boundary, err.real) } : undefined;
  }
  if (!head) return undefined;
  const { meta, body } = parseFrontMatter(head.text.replace(/^\uFEFF/, ""));
  if (body === head.text.replace(/^\uFEFF/, "")) {
    return {
      notice: `Skipped ${file}: it has no front matter (\`---\`, then \`name:\` and \`description:\`, then \`---\`) within its first ${MAX_SKILL_HEAD_BYTES / 1024} KiB.`,
    };
  }
  const name = meta.name ?? "";
  if (!NAME.test(name))
    return {
      notice: `Skipped ${file}: its front matter has ${name ? `an invalid name "${name.slice(0, 64)}"` : "no name"} (letters, digits, - _ . :, at most 64).`,
    };
  const description = (meta.description ?? "").replace(/\s+/g, " ").trim();
  if (!description) return { notice: `Skipped ${file}: its front matter has no description.` };
  const clipped = description.length > MAX_DESCRIPTION_CHARS ? `${description.slice(0, MAX_DESCRIPTION_CHARS)}…` : description;
  return { skill: { name, description: clipped, folder, shown, inside: root.inside } };
}

/**
 * Every skill of the session's folders, the most specific folder's for each name, at most
 * MAX_SKILLS (the first found, in the order the folders come and their entries sort), listed by
 * name; with the user's notices.
 */
export async function discoverSkills(place: SkillPlace, configDir: string, home?: string): Promise<SkillSet> {
  const set: SkillSet = { skills: [], hidden: [], notices: [] };
  const byName = new Map<string, Skill>();
  let dropped = 0;
  let unsaid = 0;
  const say = (line: string) => (set.notices.length < MAX_NOTICES ? set.notices.push(line) : unsaid++);
  for (const root of await skillRoots(place, configDir, home)) {
    if (!mayExistBelow(root.base, root.dir)) continue;
    let real: string;
    try {
      real = await realPathInside(root.dir, root.inside);
    } catch (err) {
      if (err instanceof OutsideError) say(outsideNotice(root.dir, root.boundary, err.real));
      continue;
    }
    const { names, more } = await entryNames(real);
    if (more) say(`Only the first ${MAX_SKILL_ENTRIES} entries of ${root.dir} were looked at for skills.`);
    const found = await Promise.all(names.map((n) => readSkill(root, real, n, place.cwd)));
    for (const f of found) {
      if (!f) continue;
      if ("notice" in f) {
        say(f.notice);
        continue;
      }
      const winner = byName.get(f.skill.name);
      if (winner) set.hidden.push({ name: f.skill.name, shown: f.skill.shown, by: winner.shown });
      else if (byName.size >= MAX_SKILLS) dropped++;
      else byName.set(f.skill.name, f.skill);
    }
  }
  set.skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (dropped) say(`${dropped} more skill${dropped === 1 ? "" : "s"} not listed: at most ${MAX_SKILLS} are.`);
  if (unsaid) set.notices.push(`… and ${unsaid} more skipped skill file${unsaid === 1 ? "" : "s"} or folders.`);
  return set;
}

/** The files of a skill's folder (relative, sorted), links only when they really lie inside; bounded. */
async function folderFiles(real: string, inside: readonly string[]): Promise<{ files: string[]; more: boolean }> {
  const files: string[] = [];
  let seen = 0;
  let more = false;
  const visit = async (dir: string, depth: number): Promise<void> => {
    let handle: Dir;
    try {
      handle = await opendir(dir);
    } catch {
      return;
    }
    const folders: string[] = [];
    try {
      for await (const e of handle) {
        if (++seen > MAX_LISTED_ENTRIES || files.length >= MAX_SKILL_FILES) {
          more = true;
          break;
        }
        const path = join(dir, e.name);
        if (e.isDirectory()) folders.push(path);
        else if (e.isFile() || (e.isSymbolicLink() && (await linkedFileInside(path, inside)))) files.push(relative(real, path));
      }
    } finally {
      await handle.close().catch(() => undefined);
    }
    if (depth < MAX_LISTED_DEPTH) for (const f of folders.sort()) await visit(f, depth + 1);
    else if (folders.length) more = true;
  };
  await visit(real, 1);
  return { files: files.filter((f) => f !== "SKILL.md").sort(), more };
}

async function linkedFileInside(path: string, inside: readonly string[]): Promise<boolean> {
  try {
    const real = await realPathInside(path, inside);
    return (await lstat(real)).isFile();
  } catch {
    return false;
  }
}

/** The `skill` tool's reading of one skill, found again by name (the folders may have changed since the prompt was built). */
export async function readSkillBody(place: SkillPlace, configDir: string, name: string, home?: string): Promise<SkillRead | { error: string }> {
  const { skills } = await discoverSkills(place, configDir, home);
  const skill = skills.find((s) => s.name === name);
  if (!skill) {
    const known = skills.map((s) => s.name).join(", ");
    return { error: `No skill named "${name}". ${known ? `The skills are: ${known}.` : "This session has no skills."}` };
  }
  let real: string;
  let head: Head | undefined;
  try {
    real = await realPathInside(skill.folder, skill.inside);
    head = await readHead(join(real, "SKILL.md"), MAX_SKILL_BODY_BYTES, skill.inside);
  } catch (err) {
    return {
      error:
        err instanceof OutsideError
          ? `The skill "${name}" links outside where it may be read from; it was not read.`
          : `The skill "${name}" could not be read.`,
    };
  }
  if (!head) return { error: `The skill "${name}" has no SKILL.md file any more.` };
  const { files, more } = await folderFiles(real, skill.inside);
  return { name, folder: skill.folder, body: parseFrontMatter(head.text.replace(/^\uFEFF/, "")).body.trim(), clipped: !head.complete, files, moreFiles: more };
}

/** What the session's tools reach the skills through (tools/types.ts `SkillLibrary`). */
export function skillLibrary(place: () => SkillPlace, configDir: string): SkillLibrary {
  return { read: (name) => readSkillBody(place(), configDir, name) };
}
