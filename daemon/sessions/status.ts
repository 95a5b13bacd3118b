/**
 * The `_reasonix.io/session/status` object (schema version 1): state, phase, controls, goal, turn
 * outcome, queued work, the session's permission grants and usage with its costQuote, built from
 * what a session exposes.
 */
import type { DaemonConfig } from "../config/config.js";
import { STATUS_UPDATE_METHOD, type SessionMeter } from "./meter.js";
import type { ClientPort, SessionRecord } from "./types.js";
import type { GrantView } from "../tools/permissions.js";
import type { JobView } from "../tools/jobs.js";
import type { HeldTurn } from "../agent/window-hold.js";

export interface StatusView {
  record: Readonly<SessionRecord>;
  running: boolean;
  /** The running turn waits for a window before a change or a model request (detachedTurns: hold). */
  held: HeldTurn | undefined;
  pendingPermissions: number;
  inbox: { depth: number; paused: boolean };
  meter: SessionMeter;
  config: DaemonConfig;
  sequence: number;
  /** The "always" answers of this session (in memory only: a restart forgets them). */
  grants: GrantView[];
  /** Tokens the next request carries and the model's window. */
  context: { used: number; size: number };
  /** Background commands, running or ended. */
  jobs: JobView[];
}

export function statusSnapshot(v: StatusView): Record<string, unknown> {
  const r = v.record;
  const outcome = v.meter.outcome;
  // A held turn waits for the user as much as a question does: the schema's waiting_input, with `held` saying for what.
  const phase = v.running
    ? v.held
      ? "waiting_input"
      : v.pendingPermissions > 0
        ? "waiting_permission"
        : "working"
    : !outcome
      ? "idle"
      : outcome.kind === "max_turn_requests"
        ? "paused"
        : outcome.kind;
  return {
    schemaVersion: 1,
    sequence: v.sequence,
    sessionId: r.id,
    state: v.running ? "running" : "idle",
    phase,
    model: r.model,
    effort: r.effort,
    mode: r.mode,
    toolApproval: r.toolApproval,
    goal: r.goal
      ? {
          status: r.goal.status,
          objective: r.goal.text,
          turns: r.goal.turns,
          startedAt: r.goal.startedAt,
          ...(r.goal.summary ? { summary: r.goal.summary } : {}),
        }
      : null,
    turnOutcome: outcome ?? null,
    held: v.held ? { reason: "no window attached", ...v.held } : null,
    pendingPermissions: v.pendingPermissions,
    inbox: v.inbox,
    grants: v.grants,
    jobs: v.jobs,
    usage: { turn: v.meter.usageObject(v.config, "turn"), cumulative: v.meter.usageObject(v.config, "cumulative") },
    context: {
      used: v.context.used,
      size: v.context.size,
      compactions: r.compaction?.count ?? 0,
      ...(r.compaction ? { lastCompaction: r.compaction } : {}),
    },
  };
}

/** One live session in the daemon's /status: what an operator needs, never the session's internals. */
export interface OperatorStatus {
  sessionId: string;
  cwd: string;
  title: string | null;
  status: string;
  attachments: number;
  model: string;
  running: boolean;
  /** The running turn waits for a window (no window attached, detachedTurns: hold); null otherwise. */
  held: HeldTurn | null;
  queuedPrompts: number;
  pendingPermissions: unknown[];
  inbox: { depth: number; paused: boolean };
  modelRounds: number;
  /** Background commands, running or ended, with their process ids. */
  jobs: JobView[];
}

/** A session's status in both shapes (vendor snapshot, operator view) and its status updates. */
export class StatusReporter {
  private sequence = 0;

  constructor(
    private readonly v: {
      sessionId: string;
      record: Readonly<SessionRecord>;
      attachments: { readonly size: number } & Iterable<ClientPort>;
      running(): boolean;
      held(): HeldTurn | undefined;
      queued(): number;
      pending(): unknown[];
      inbox: { depth(): number; readonly paused: boolean };
      meter: SessionMeter;
      config(): DaemonConfig;
      grants(): GrantView[];
      context(): { used: number; size: number };
      jobs(): JobView[];
    },
  ) {}

  snapshot(): Record<string, unknown> {
    const v = this.v;
    const inbox = { depth: v.inbox.depth(), paused: v.inbox.paused };
    return statusSnapshot({
      record: v.record,
      running: v.running(),
      held: v.held(),
      pendingPermissions: v.pending().length,
      inbox,
      meter: v.meter,
      config: v.config(),
      sequence: ++this.sequence,
      grants: v.grants(),
      context: v.context(),
      jobs: v.jobs(),
    });
  }

  operator(): OperatorStatus {
    const { record: r, inbox } = this.v;
    return {
      sessionId: r.id,
      cwd: r.cwd,
      title: r.title ?? null,
      status: r.status,
      attachments: this.v.attachments.size,
      model: r.model,
      running: this.v.running(),
      held: this.v.held() ?? null,
      queuedPrompts: this.v.queued(),
      pendingPermissions: this.v.pending(),
      inbox: { depth: inbox.depth(), paused: inbox.paused },
      modelRounds: r.usage?.rounds ?? 0,
      jobs: this.v.jobs(),
    };
  }

  /** `_reasonix.io/session/status_update` to every window; vendor data, so not in the ledger. */
  notify(event: string): void {
    if (this.v.attachments.size === 0) return;
    const status = this.snapshot();
    for (const port of this.v.attachments) {
      if (!port.closed) port.notify(STATUS_UPDATE_METHOD, { schemaVersion: 1, sequence: status.sequence, sessionId: this.v.sessionId, event, status });
    }
  }
}
