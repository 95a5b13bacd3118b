/**
 * The session's system prompt from its sources: environment facts and project instructions,
 * gathered when the session starts and again only on a reload, which replaces the first message of
 * the conversation (the one moment the cached prefix may change) and says what it now holds.
 */
import { gatherFacts } from "../agent/environment-facts.js";
import { loadInstructions, type InstructionFile } from "../agent/project-instructions.js";
import { systemPrompt } from "../agent/system-prompt.js";
import type { SessionState } from "./session-state.js";
import type { SessionRecord } from "./types.js";

export interface BuiltPrompt {
  text: string;
  files: InstructionFile[];
  /** Files left out because they link outside where they belong: for the user, never the model. */
  notices: string[];
}

export async function buildSystemPrompt(record: SessionRecord, configDir: string): Promise<BuiltPrompt> {
  const [gathered, instructions] = await Promise.all([
    gatherFacts(record.cwd, record.additionalDirectories, record.environment ?? {}),
    loadInstructions(record.cwd, configDir, record.additionalDirectories),
  ]);
  record.instructionFiles = instructions.files.map((f) => f.path);
  return { text: systemPrompt(gathered.facts, instructions.files), files: instructions.files, notices: [...instructions.skipped, ...gathered.skipped] };
}

/** What the user is told after a reload about the instructions the model now follows, and what was skipped. */
export function instructionsNotice(files: readonly InstructionFile[], changed: boolean, skipped: readonly string[] = []): string {
  const head = changed ? "Project instructions reloaded; the model follows them from the next request on." : "Project instructions unchanged.";
  const lines =
    files.length === 0 ? [`${head} No AGENTS.md or REASONIX.md was found.`] : [head, ...files.map((f) => `- ${f.path}${f.clipped ? " (clipped)" : ""}`)];
  return [...lines, ...skipped].join("\n");
}

/**
 * Rebuilds the system prompt; a different one replaces the conversation's first message. `skipped`
 * are other files the reload left out (command folders, plugins), named in the same notice.
 */
export async function refreshSystemPrompt(state: SessionState, configDir: string, skipped: readonly string[] = []): Promise<string> {
  const { text, files, notices } = await buildSystemPrompt(state.record, configDir);
  const changed = state.history()[0]?.content !== text;
  if (changed) state.replaceSystemPrompt(text);
  await state.commit();
  return instructionsNotice(files, changed, [...notices, ...skipped]);
}
