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

export async function buildSystemPrompt(record: SessionRecord, configDir: string): Promise<{ text: string; files: InstructionFile[] }> {
  const [facts, files] = await Promise.all([
    gatherFacts(record.cwd, record.additionalDirectories, record.environment ?? {}),
    loadInstructions(record.cwd, configDir),
  ]);
  record.instructionFiles = files.map((f) => f.path);
  return { text: systemPrompt(facts, files), files };
}

/** What the user is told after a reload about the instructions the model now follows. */
export function instructionsNotice(files: readonly InstructionFile[], changed: boolean): string {
  const head = changed ? "Project instructions reloaded; the model follows them from the next request on." : "Project instructions unchanged.";
  if (files.length === 0) return `${head} No AGENTS.md or REASONIX.md was found.`;
  return [head, ...files.map((f) => `- ${f.path}${f.clipped ? " (clipped)" : ""}`)].join("\n");
}

/** Rebuilds the system prompt; a different one replaces the conversation's first message. */
export async function refreshSystemPrompt(state: SessionState, configDir: string): Promise<string> {
  const { text, files } = await buildSystemPrompt(state.record, configDir);
  const changed = state.history()[0]?.content !== text;
  if (changed) state.replaceSystemPrompt(text);
  await state.commit();
  return instructionsNotice(files, changed);
}
