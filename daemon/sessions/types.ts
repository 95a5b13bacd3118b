import type { SessionUpdate, StopReason } from "@agentclientprotocol/sdk";

export type { SessionUpdate, StopReason };
import type { GoalState } from "../agent/goal.js";
import type { EditorSilence } from "../tools/editor-silence.js";
export type { GoalState };
export type { ChatMessage } from "../provider/types.js";

/** What a session knows of an attached editor connection (implemented by acp/). */
export interface ClientPort {
  readonly connectionId: string;
  readonly capabilities: ClientCaps;
  /** Last prompt, cancel or answer from this window: picks the target of editor requests. */
  lastActive: number;
  readonly closed: boolean;
  /** The window's whole environment, as its shim sent it (secrets included: never hand it to a tool). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The window's umask, as its shim sent it; undefined when the client did not say. */
  readonly umask?: number | undefined;
  sendUpdate(sessionId: string, update: SessionUpdate): void;
  /** A vendor notification (status updates, extension surfaces). */
  notify(method: string, params: unknown): void;
  /** Bytes sent to this window but not yet taken by it: replay waits when it grows. */
  backlog(): number;
  request(method: string, params: unknown, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  /** The `fs/*` and `terminal/*` methods this window let time out lately: the window's, for every session on it. */
  readonly silence: EditorSilence;
}

export interface ClientCaps {
  readTextFile: boolean;
  writeTextFile: boolean;
  terminal: boolean;
  /** The client renders Reasonix extension surfaces itself (vendor opt-in). */
  extensionSurface: boolean;
  /** ACP `elicitation/create`, per mode (clientCapabilities.elicitation.form / .url). */
  elicitationForm: boolean;
  elicitationUrl: boolean;
  /** The vendor opt-in `_meta["reasonix.io"].mcpInteraction = {supported: true, schemaVersion: 1}`. */
  mcpInteraction: boolean;
  /**
   * The client's initialize carried `clientCapabilities._meta["reasonix.io"]`: only then does it get
   * `_reasonix.io/` notifications and reverse requests (generic clients print every one they get).
   */
  vendor: boolean;
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

export type LedgerBody =
  /**
   * `more`: the texts of the chunks of `update`'s kind that streamed right after it, each sent as
   * its own update (see ledger-join.ts); absent when the record holds one update.
   * `historyAt`, on conversation updates (message-ids.ts `isConversation`): how many model history
   * messages there were when it was recorded, and `compactions` how many compactions had rewritten
   * that history (absent: none) — where a fork cut before this update ends the history (fork.ts).
   */
  | { type: "update"; update: SessionUpdate; more?: string[]; historyAt?: number; compactions?: number }
  | { type: "turn_start"; turnId: string }
  | { type: "turn_end"; turnId: string; stopReason?: StopReason; error?: string }
  | { type: "interrupted" }
  | { type: "permission"; toolCallId: string; outcome: string };

export type LedgerEntry = LedgerBody & { seq: number; at: string };
