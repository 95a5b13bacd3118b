import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";

export type { SessionUpdate, StopReason };
import type { GoalState } from "../agent/goal.js";
import type { BuiltPrompt } from "../agent/instructions.js";
export type { GoalState };
export type { ChatMessage } from "../provider/types.js";
export type { ClientCaps, ClientPort } from "../windows/port.js";
export type { LedgerBody, LedgerEntry } from "../ledger/types.js";

/** What keeps a session busy or in use (sessions/in-use.ts words it; the idle sweep and the daemon's idle stop read it). */
export interface SessionActivity {
  windows: number;
  running: boolean;
  /** A turn runs, a prompt waits for it, or the inbox driver is starting a follow-up. */
  busy: boolean;
  questions: number;
  jobs: number;
  /** Inbox items waiting to run. */
  queued: number;
}

/** No turn, nothing waiting, no question pending, no job running: the daemon may stop or hand over. */
export function isIdle(a: SessionActivity): boolean {
  return !a.busy && a.questions === 0 && a.jobs === 0;
}

/** How a session goes live: its system prompt when one was built, the creating window's environment, notices for the user. */
export interface SessionStart {
  prompt?: BuiltPrompt | undefined;
  /** The environment whose provider keys its model requests use (the creating window's). */
  providerEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /** Lines for the user, said with the system prompt's by `greet` (notices.ts). */
  notices?: string[];
}

export type SessionStatus = "idle" | "running" | "interrupted";

export interface SessionRecord {
  id: string;
  cwd: string;
  additionalDirectories: string[];
  title?: string;
  createdAt: string;
  updatedAt: string;
  model: string;
  effort: string;
  mode: string;
  toolApproval: string;
  status: SessionStatus;
  lastSeq: number;
  historyLength: number;
  /** Goal mode: the goal the agent keeps working on, once a prompt set it. */
  goal?: GoalState | undefined;
  /** Notes for the model (mode changes) that ride along with the next user message. */
  notes?: string[] | undefined;
  usage?: UsageTotals;
  /**
   * What the session's commands, stdio MCP servers and plugin actions inherit: the creating window's
   * environment minus secrets (environment.ts), fixed until the user asks for `/env reload`.
   */
  environment?: Record<string, string>;
  /**
   * The creating window's umask, for the session's commands and the files its tools create; absent
   * when that window did not say (then environment.ts's `sessionUmask` gives the default).
   */
  umask?: number | undefined;
  /** The project instruction files in the system prompt, in its order (shown by /status). */
  instructionFiles?: string[] | undefined;
  /** The cumulative cost ledger (pricing.ts), so costs survive restarts. */
  costs?: unknown;
  /** The provider's prompt tokens for the last request and how many messages it held. */
  context?: { promptTokens: number; messages: number } | undefined;
  /** Compactions of the model history so far (the summary itself is the history's second message). */
  compaction?: CompactionRecord | undefined;
}

/** What a new session's record must be given; the rest starts at the defaults of `newSessionRecord`. */
export type NewRecordFields = Pick<SessionRecord, "id" | "cwd" | "additionalDirectories" | "model"> & Partial<SessionRecord>;

/**
 * A new session's record: the defaults every session starts from (idle, normal mode, workspace-write,
 * nothing in its history), created and updated now unless `fields` says when; `fields` win.
 */
export function newSessionRecord(fields: NewRecordFields): SessionRecord {
  const { id, cwd, additionalDirectories, model, ...rest } = fields;
  const at = fields.createdAt ?? new Date().toISOString();
  return {
    id,
    cwd,
    additionalDirectories,
    createdAt: at,
    updatedAt: at,
    model,
    effort: "auto",
    mode: "normal",
    toolApproval: "workspace-write",
    status: "idle",
    lastSeq: 0,
    historyLength: 0,
    ...rest,
  };
}

export interface CompactionRecord {
  count: number;
  at: string;
  /** Messages the last compaction replaced; `summarised` false when it could only trim them. */
  messages: number;
  summarised: boolean;
  focus?: string | undefined;
  tokensBefore: number;
  tokensAfter: number;
}

export interface UsageTotals {
  rounds: number;
  promptTokens: number;
  completionTokens: number;
  cacheHitTokens: number;
  cacheMissTokens: number;
  reasoningTokens: number;
}
