/**
 * The session's system prompt from its sources: environment facts, project instructions and the
 * skills' list (agent/skills.ts),
 * gathered when the session starts and again only on a reload, which replaces the first message of
 * the conversation (the one moment the cached prefix may change) and says what it now holds.
 */
import { gatherFacts } from "./environment-facts.js";
import { loadInstructions, type InstructionFile } from "./project-instructions.js";
import { discoverSkills, type SkillSet } from "./skills.js";
import { systemPrompt } from "./system-prompt.js";

export interface BuiltPrompt {
  text: string;
  files: InstructionFile[];
  skills: SkillSet;
  /** Files left out because they link outside where they belong: for the user, never the model. */
  notices: string[];
}

/** Where a session works and what its tools inherit: what its system prompt is built from. */
export interface PromptPlace {
  cwd: string;
  additionalDirectories: string[];
  environment?: Record<string, string> | undefined;
}

/** Prompts built lately: sessions started in one place have the same one, kept once, not once each. */
const recentPrompts: string[] = [];

function shared(text: string): string {
  const same = recentPrompts.find((t) => t === text);
  if (same !== undefined) return same;
  recentPrompts.unshift(text);
  if (recentPrompts.length > 8) recentPrompts.pop();
  return text;
}

export async function buildSystemPrompt(place: PromptPlace, configDir: string): Promise<BuiltPrompt> {
  const [gathered, instructions, skills] = await Promise.all([
    gatherFacts(place.cwd, place.additionalDirectories, place.environment ?? {}),
    loadInstructions(place.cwd, configDir, place.additionalDirectories),
    discoverSkills(place, configDir),
  ]);
  return {
    text: shared(systemPrompt(gathered.facts, instructions.files, skills.skills)),
    files: instructions.files,
    skills,
    notices: [...instructions.skipped, ...gathered.skipped, ...skills.notices],
  };
}

/** What the user is told after a reload about the instructions the model now follows, and what was skipped. */
export function instructionsNotice(files: readonly InstructionFile[], changed: boolean, skipped: readonly string[] = [], skills?: SkillSet): string {
  const head = changed ? "Project instructions reloaded; the model follows them from the next request on." : "Project instructions unchanged.";
  const lines =
    files.length === 0
      ? [`${head} No AGENTS.md, CLAUDE.md or REASONIX.md was found.`]
      : [head, ...files.map((f) => `- ${f.path}${f.clipped ? " (clipped)" : ""}`)];
  const names = skills?.skills.map((s) => s.name) ?? [];
  const listed = names.length ? [`Skills: ${names.join(", ")} (\`/skills\` lists them).`] : [];
  return [...lines, ...skipped, ...listed].join("\n");
}
