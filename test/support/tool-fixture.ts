/** A real ToolContext over a temp folder, for the tools' tests: local disk and shell, recorded callbacks. */
import type { ToolCallUpdate } from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localCommands } from "../../daemon/tools/local-commands.js";
import { localFiles } from "../../daemon/tools/local-files.js";
import { FileSnapshots } from "../../daemon/tools/file-snapshots.js";
import { JobTable } from "../../daemon/tools/jobs.js";
import { SearchThreads } from "../../daemon/tools/builtin/search-thread.js";
import type { PlanEntry, Tool, ToolContext, ToolResult } from "../../daemon/tools/types.js";

export interface Fixture {
  dir: string;
  ctx: ToolContext;
  /** The search threads behind ctx.search, at the default bound. */
  searches: SearchThreads;
  abort: AbortController;
  updates: Omit<ToolCallUpdate, "toolCallId">[];
  plans: PlanEntry[][];
  questions: { question: string; choices: string[] }[];
  /** What askUser answers next; undefined means dismissed. */
  answer: string | undefined;
  cleanup(): void;
}

type Update = Omit<ToolCallUpdate, "toolCallId">;

export function fixture(): Fixture {
  const jobs = new JobTable();
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "reasonix-tools-")));
  const abort = new AbortController();
  const searches = new SearchThreads();
  const f: Fixture = {
    dir,
    searches,
    abort,
    updates: [],
    plans: [],
    questions: [],
    answer: undefined,
    cleanup: () => {
      void jobs.killAll();
      searches.close();
      rmSync(dir, { recursive: true, force: true });
    },
    ctx: {
      sessionId: "s1",
      cwd: dir,
      roots: [dir],
      env: process.env,
      umask: 0o022,
      signal: abort.signal,
      toolCallId: "call-1",
      files: localFiles(0o022),
      snapshots: new FileSnapshots(),
      allowPrivateNetwork: false,
      search: searches,
      commands: localCommands(process.env),
      sandbox: undefined,
      update: (u: Update) => void f.updates.push(u),
      setPlan: (entries) => void f.plans.push(entries),
      askUser: async (question, choices) => {
        f.questions.push({ question, choices });
        return f.answer;
      },
      jobs,
      controls: {
        mode: () => "normal",
        approvePlan: async () => "not_in_plan",
        reportGoal: () => "No goal is active; there is nothing to report.",
      },
    },
  };
  return f;
}

/** Parses the arguments as the runner would, then runs the call. */
export async function call(tool: Tool, rawArgs: unknown, ctx: ToolContext): Promise<ToolResult> {
  const p = tool.prepare(rawArgs, ctx);
  if (!p.ok) assert.fail(p.error);
  return p.call.run(ctx);
}

export function prepared(tool: Tool, rawArgs: unknown, ctx: ToolContext) {
  const p = tool.prepare(rawArgs, ctx);
  if (!p.ok) assert.fail(p.error);
  return p.call;
}
