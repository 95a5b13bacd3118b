/**
 * The `_reasonix.io/session/status` object (schema version 1): state, phase, controls, goal, turn
 * outcome, queued work, the session's permission grants and usage with its costQuote, built from
 * what a session exposes.
 */
import type { DaemonConfig } from "../config/config.js";
import type { SessionMeter } from "./meter.js";
import type { SessionRecord } from "./types.js";
import type { GrantView } from "../tools/permissions.js";

export interface StatusView {
  record: SessionRecord;
  running: boolean;
  pendingPermissions: number;
  inbox: { depth: number; paused: boolean };
  meter: SessionMeter;
  config: DaemonConfig;
  sequence: number;
  /** The "always" answers of this session (in memory only: a restart forgets them). */
  grants: GrantView[];
}

export function statusSnapshot(v: StatusView): Record<string, unknown> {
  const r = v.record;
  const outcome = v.meter.outcome;
  const phase = v.running
    ? v.pendingPermissions > 0
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
    goal: r.goal ? { status: r.goal.status, objective: r.goal.text, turns: r.goal.turns, startedAt: r.goal.startedAt, ...(r.goal.summary ? { summary: r.goal.summary } : {}) } : null,
    turnOutcome: outcome ?? null,
    pendingPermissions: v.pendingPermissions,
    inbox: v.inbox,
    grants: v.grants,
    usage: { turn: v.meter.usageObject(v.config, "turn"), cumulative: v.meter.usageObject(v.config, "cumulative") },
  };
}
