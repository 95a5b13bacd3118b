/**
 * `/init`: a built-in command that is answered by the model, not locally. It asks the model to
 * survey the repository and write a starter AGENTS.md; the write goes through write_file, so the
 * session's permission preset and the editor's buffers apply as to any other edit.
 */
export interface ModelCommand {
  name: string;
  description: string;
  hint?: string;
  prompt(args: string): string;
}

const INIT_PROMPT = `Survey this repository and write a starter AGENTS.md at the workspace root: the instructions a coding agent (and a new contributor) needs to work here well.

1. Look before you write: the README and other docs, the package or build manifests (package.json, pyproject.toml, Cargo.toml, go.mod, Makefile, …), CI configuration, lint and format configuration, the folder layout and a few representative source and test files. Prefer search over listing every folder.
2. If an AGENTS.md (or REASONIX.md, CLAUDE.md, .cursorrules, .github/copilot-instructions.md) already exists, read it and improve it rather than starting over; keep what is still true.
3. Write AGENTS.md with write_file. Keep it short and specific to this project (about 20 to 60 lines), in these sections where they apply:
   - the project in one or two sentences, and the layout: which folder holds what;
   - how to build, run, test (all tests and one test), lint and format, as exact commands;
   - code style and conventions that are not obvious from a linter: naming, error handling, where tests go;
   - anything that surprises newcomers: generated files not to edit, required environment, slow or flaky tests.
   Do not invent commands: write only what you found in the repository. No generic advice ("write clean code").
4. Answer with a short summary of what you wrote.`;

export const MODEL_COMMANDS: ModelCommand[] = [
  {
    name: "init",
    description: "Survey the repository and write a starter AGENTS.md (through the model, with the usual permission)",
    hint: "[focus]",
    prompt: (args) => (args.trim() ? `${INIT_PROMPT}\n\nThe user adds: ${args.trim()}` : INIT_PROMPT),
  },
];
