/**
 * Built-in slash commands. They answer locally, as an agent message, and never call the model.
 */
import type { AvailableCommand } from "@agentclientprotocol/sdk";
/** What the commands read of a session (structurally its record; commands sit below sessions). */
export interface CommandSessionView {
  id: string;
  model: string;
  effort: string;
  mode: string;
  toolApproval: string;
  cwd: string;
  additionalDirectories: string[];
  goal?: { text: string; status: string; turns: number } | undefined;
  instructionFiles?: string[] | undefined;
  usage?: { rounds: number; promptTokens: number; completionTokens: number; cacheHitTokens: number; cacheMissTokens: number; reasoningTokens: number };
  compaction?: { count: number; at: string; messages: number; summarised: boolean } | undefined;
}

export interface CommandHost {
  record: CommandSessionView;
  queuedPrompts: number;
  pendingPermissions: number;
  mcpServers: string[];
  /** The session's "always" answers: what each covers (see tools/permissions.ts). */
  grants: Array<{ decision: string; tool: string; match: string; covers: string }>;
  models(): string[];
  /** Switches the session's model as the `model` config option does; returns the new reference. */
  setModel(ref: string): Promise<string>;
  listSessions(): Promise<Array<{ sessionId: string; title?: string; updatedAt: string }>>;
  commands(): AvailableCommand[];
  /** Names of the variables the session's commands inherit. */
  environmentNames(): string[];
  /** Takes the calling window's environment (minus secrets) for the session's commands; returns the names. */
  reloadEnvironment(): Promise<string[]>;
  /** Rebuilds plugins, MCP servers, commands and the system prompt (project instructions); returns the notice. */
  reload(): Promise<string>;
  /** Compacts the model history now (one summary request); returns what happened, in words. */
  compact(focus: string): Promise<string>;
  /** The context the next request carries, the model's window, and the summary in force. */
  context(): { used: number; size: number; summary: string | undefined };
  /** Where the session's commands run now: the sandbox in words, or why there is none. */
  sandbox(): Promise<string>;
  /** The session's background commands. */
  jobs(): Array<{ jobId: string; command: string; pid: number | undefined; startedAt: string; state: string; exitCode: number | null; signal: string | null }>;
  /** Restores the files of the newest checkpoint not yet undone (`force`: even those changed since); the answer to show. */
  undo(force: boolean): Promise<string>;
  redo(force: boolean): Promise<string>;
  checkpoints(): Promise<string>;
  /** The subagents' transcripts: the list, or one by its number. */
  tasks(args: string): Promise<string>;
  /** The session's Agent Skills as its folders hold them now (agent/skills.ts). */
  skills(): Promise<SkillsView>;
}

/** What `/skills` shows: the skills listed, those a more specific folder hid, and what was skipped. */
export interface SkillsView {
  skills: Array<{ name: string; description: string; shown: string }>;
  hidden: Array<{ name: string; shown: string; by: string }>;
  notices: string[];
}

function skillsAnswer(view: SkillsView): string {
  const listed = view.skills.length
    ? [
        "**Skills** (the model sees each name and description, and loads one with the `skill` tool)",
        ...view.skills.map((s) => `- \`${s.name}\` — ${s.description} — ${s.shown}`),
      ]
    : ["No skills found."];
  const hidden = view.hidden.length
    ? ["", "Hidden by a skill of the same name in a more specific folder:", ...view.hidden.map((h) => `- \`${h.name}\` in ${h.shown} (hidden by ${h.by})`)]
    : [];
  const notices = view.notices.length ? ["", ...view.notices] : [];
  return [
    ...listed,
    ...hidden,
    ...notices,
    "",
    "Read from `.reasonix/skills/`, `.claude/skills/`, `.agents/skills/` at the repository root, then the config folder's `skills/` and `~/.agents/skills/`; the first of these with a name wins. The model's list was fixed when the session started: `/reload` takes changes.",
  ].join("\n");
}

export interface BuiltinCommand {
  name: string;
  description: string;
  hint?: string;
  run(args: string, host: CommandHost): Promise<string>;
}

const n = (v: number | undefined): string => (v ?? 0).toLocaleString("en-US");

function grantLine(g: CommandHost["grants"][number]): string {
  switch (g.match) {
    case "exact":
      return `${g.decision} \`${g.covers}\` exactly (${g.tool})`;
    case "prefix":
      return `${g.decision} \`${g.covers}\` (${g.tool})`;
    case "read":
    case "write":
      return `${g.decision} ${g.tool} ${g.match === "write" ? "writing" : "reading"} ${g.covers}`;
    case "host":
      return `${g.decision} ${g.tool} from ${g.covers}`;
    default:
      return `${g.decision} the MCP tool ${g.covers}`;
  }
}

function jobLine(j: ReturnType<CommandHost["jobs"]>[number]): string {
  const state = j.state === "running" ? `running (pid ${j.pid ?? "?"})` : j.exitCode !== null ? `exited ${j.exitCode}` : `ended by ${j.signal ?? "a signal"}`;
  return `\`${j.jobId}\` ${state} — \`${j.command.replace(/\s+/g, " ").slice(0, 80)}\` — since ${j.startedAt}`;
}

function grantLines(grants: CommandHost["grants"]): string[] {
  if (grants.length === 0) return ["- Always-answers: none"];
  return ["- Always-answers (this session only):", ...grants.map((g) => `  - ${grantLine(g)}`)];
}

function contextLine(host: CommandHost): string {
  const { used, size } = host.context();
  const c = host.record.compaction;
  const compacted = c
    ? `; compacted ${c.count} time${c.count === 1 ? "" : "s"}, last ${c.at} (${c.messages} messages${c.summarised ? "" : ", trimmed only: the summary failed"}) — \`/summary\` shows the summary`
    : "";
  return `- Context: about ${n(used)} tokens of ${n(size)} (${Math.round((used / size) * 100)}%)${compacted}`;
}

/** `/undo` and `/redo` take `--force` and nothing else: a typo must not be taken for it, or for its absence. */
async function withForce(name: string, args: string, run: (force: boolean) => Promise<string>): Promise<string> {
  const arg = args.trim();
  if (arg !== "" && arg !== "--force") return `Usage: \`/${name}\`, or \`/${name} --force\` to go ahead over files changed since.`;
  return run(arg === "--force");
}

export const BUILTIN_COMMANDS: BuiltinCommand[] = [
  {
    name: "help",
    description: "List the slash commands of this session",
    async run(_args, host) {
      const lines = host.commands().map((c) => `- \`/${c.name}${c.input ? ` ${c.input.hint}` : ""}\` — ${c.description}`);
      return ["**Commands**", ...lines, "", "Anything else starting with `/` goes to the model as typed."].join("\n");
    },
  },
  {
    name: "status",
    description: "Show the model, mode, permissions, usage so far, MCP servers and queued work",
    async run(_args, host) {
      const r = host.record;
      const u = r.usage;
      return [
        "**Session status**",
        `- Model: ${r.model}${r.effort !== "auto" ? ` (effort ${r.effort})` : ""}`,
        `- Mode: ${r.mode}${r.goal ? ` — goal: ${r.goal.text} (${r.goal.status}, ${r.goal.turns} turns)` : ""}`,
        `- Permissions: ${r.toolApproval}`,
        ...grantLines(host.grants),
        `- Commands: ${await host.sandbox()}`,
        `- Usage so far: ${n(u?.rounds)} model rounds, ${n(u?.promptTokens)} prompt tokens (${n(u?.cacheHitTokens)} cache hits, ${n(u?.cacheMissTokens)} misses), ${n(u?.completionTokens)} completion tokens (${n(u?.reasoningTokens)} reasoning)`,
        contextLine(host),
        `- MCP servers: ${host.mcpServers.length ? host.mcpServers.join(", ") : "none"}`,
        `- Inbox: ${host.queuedPrompts} queued prompt${host.queuedPrompts === 1 ? "" : "s"}, ${host.pendingPermissions} pending permission question${host.pendingPermissions === 1 ? "" : "s"}`,
        `- Background jobs: ${host.jobs().length ? host.jobs().map(jobLine).join("; ") : "none"}`,
        `- Workspace: ${[r.cwd, ...r.additionalDirectories].join(", ")}`,
        `- Project instructions: ${r.instructionFiles?.length ? r.instructionFiles.join(", ") : "none"}`,
      ].join("\n");
    },
  },
  {
    name: "model",
    description: "Show the models, or switch this session to another",
    hint: "[provider/model]",
    async run(args, host) {
      if (args) {
        const ref = await host.setModel(args);
        return `Model switched to **${ref}**; it answers from the next turn on.`;
      }
      return ["**Models**", ...host.models().map((m) => `- ${m === host.record.model ? `**${m}** (current)` : m}`)].join("\n");
    },
  },
  {
    name: "compact",
    description: "Summarise the earlier conversation to free context now (the editor keeps the full history)",
    hint: "[focus]",
    async run(args, host) {
      return host.compact(args.trim());
    },
  },
  {
    name: "summary",
    description: "Show the summary that stands for the compacted part of the conversation",
    async run(_args, host) {
      const { summary } = host.context();
      return summary ? `**Summary in force**\n\n${summary}` : "Nothing has been compacted in this session: the model sees the whole conversation.";
    },
  },
  {
    name: "mcp",
    description: "List the MCP servers of this session",
    async run(_args, host) {
      return host.mcpServers.length ? ["**MCP servers**", ...host.mcpServers.map((s) => `- ${s}`)].join("\n") : "No MCP servers are connected to this session.";
    },
  },
  {
    name: "env",
    description: "Show what this session's commands inherit of the environment, or take this window's (reload)",
    hint: "[reload]",
    async run(args, host) {
      const reload = args.trim() === "reload";
      if (args.trim() && !reload) return "Usage: `/env` lists the variables this session's commands inherit; `/env reload` takes this window's environment.";
      const names = reload ? await host.reloadEnvironment() : host.environmentNames();
      return [
        reload
          ? `**Environment reloaded** from this window: ${names.length} variables.`
          : `**Environment**: this session's commands inherit ${names.length} variables of the window that created it.`,
        names.length ? names.map((name) => `\`${name}\``).join(", ") : "(none)",
        "",
        "Names containing KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL are left out; `shellEnvironment` in config.json adjusts that.",
      ].join("\n");
    },
  },
  {
    name: "reload",
    description: "Reload project instructions (AGENTS.md, CLAUDE.md, REASONIX.md), skills, plugins, MCP servers and commands",
    async run(_args, host) {
      return host.reload();
    },
  },
  {
    name: "jobs",
    description: "List this session's background commands",
    async run(_args, host) {
      const jobs = host.jobs();
      if (jobs.length === 0) return "No background jobs in this session.";
      return ["**Background jobs** (they run on when windows close; closing the session stops them)", ...jobs.map((j) => `- ${jobLine(j)}`)].join("\n");
    },
  },
  {
    name: "undo",
    description: "Restore the files the last turn changed (not yet undone); --force even when they changed since",
    hint: "[--force]",
    run: (args, host) => withForce("undo", args, (force) => host.undo(force)),
  },
  {
    name: "redo",
    description: "Re-apply the last /undo; --force even when its files changed since",
    hint: "[--force]",
    run: (args, host) => withForce("redo", args, (force) => host.redo(force)),
  },
  {
    name: "checkpoints",
    description: "List the saved checkpoints of this session's file changes",
    run: (_args, host) => host.checkpoints(),
  },
  {
    name: "tasks",
    description: "List the subagents this session ran, or show one's whole transcript",
    hint: "[N]",
    run: (args, host) => host.tasks(args),
  },
  {
    name: "skills",
    description: "List the Agent Skills of this session (SKILL.md folders of the project and the user)",
    run: async (_args, host) => skillsAnswer(await host.skills()),
  },
  {
    name: "sessions",
    description: "List the sessions of this workspace",
    async run(_args, host) {
      const list = await host.listSessions();
      if (list.length === 0) return "No sessions in this workspace.";
      return [
        "**Sessions**",
        ...list.map((s) => `- ${s.title ?? "(untitled)"} — ${s.updatedAt} — \`${s.sessionId}\`${s.sessionId === host.record.id ? " (this one)" : ""}`),
      ].join("\n");
    },
  },
];
