/**
 * How a session's parts are joined: the editor router and permission broker, the tools, plugin
 * surfaces, the runtime (commands, plugins, MCP servers), the agent's turn runner and the status
 * reporter, each given the few callbacks into the session it needs.
 */
import { TurnRunner } from "../agent/turn-runner.js";
import { subagentRunner } from "../agent/subagent.js";
import { JobTable } from "../tools/jobs.js";
import { SessionSandbox } from "../tools/sandbox.js";
import { Checkpoints } from "./checkpoints.js";
import { sessionUmask } from "./environment.js";
import { jobHooks } from "./job-records.js";
import { TaskTranscripts } from "./task-transcripts.js";
import type { Inbox } from "../inbox/inbox.js";
import type { SessionDeps } from "./deps.js";
import { EditorRouter } from "./editor-router.js";
import { relayInteraction } from "./interaction.js";
import type { SessionMeter } from "./meter.js";
import { PermissionBroker } from "./permission-broker.js";
import { SessionRuntime } from "./runtime.js";
import type { SessionState } from "./session-state.js";
import { SessionTools } from "./session-tools.js";
import { approvePlan, reportGoal } from "./settings.js";
import { StatusReporter } from "./status.js";
import { SurfaceEmitter } from "./surfaces.js";
import { turnPort, type TurnPortParts } from "./turn-port.js";
import type { ClientPort } from "./types.js";
import type { StartNotices } from "./notices.js";

/** The session as its parts call back into it. */
export type WiringHost = TurnPortParts["session"] & {
  readonly attachments: Set<ClientPort>;
  readonly notices: StartNotices;
  toolEnv(): Record<string, string>;
};

export interface SessionParts {
  router: EditorRouter;
  broker: PermissionBroker;
  tools: SessionTools;
  surfaces: SurfaceEmitter;
  runtime: SessionRuntime;
  turns: TurnRunner<ClientPort>;
  status: StatusReporter;
  jobs: JobTable;
  checkpoints: Checkpoints;
  transcripts: TaskTranscripts;
}

export function wireSession(session: WiringHost, state: SessionState, meter: SessionMeter, inbox: Inbox, deps: SessionDeps): SessionParts {
  const { record, attachments, log } = session;
  // The runner is made last (it needs the others); the callbacks below reach it when they run.
  let turns!: TurnRunner<ClientPort>;
  const router = new EditorRouter(
    () => attachments,
    () => turns.origin,
  );
  const broker = new PermissionBroker(record.id, router, () => deps.permissionTimeoutMs());
  const jobs = new JobTable(jobHooks(deps.store, record.id, log));
  const sandbox = new SessionSandbox({ status: () => deps.sandbox(), hidden: deps.hiddenDirs, network: () => deps.config().sandbox.network });
  const checkpoints = new Checkpoints(deps.store, record.id, record.cwd, () => sessionUmask(record));
  const transcripts = new TaskTranscripts(deps.store, record.id, log);
  let port!: ReturnType<typeof turnPort>;
  const tools = new SessionTools({
    record,
    env: () => session.toolEnv(),
    emit: (u) => turns.emitForTurn(u),
    router,
    broker,
    recordDecision: (id, outcome) => session.recordDecision(id, outcome),
    allowPrivateNetwork: () => deps.config().webFetch.allowPrivateNetwork,
    daemonTools: deps.tools,
    controls: {
      mode: () => record.mode,
      approvePlan: (plan, steps, toolCallId, signal) => approvePlan(session, plan, steps, toolCallId, signal),
      reportGoal: (status, summary) => reportGoal(session, status, summary),
    },
    jobs,
    sandbox,
    beforeWrite: (path, read) => checkpoints.capture(path, read),
    beforeChange: (title, signal) => turns.holdForWindow(`the tool call "${title}"`, signal),
    subagent: (runner, toolCallId) =>
      subagentRunner({
        runner,
        toolCallId,
        createModel: () => port.createModel(),
        onUsage: (u) => turns.emitForTurn(port.onUsage(u)),
        countStep: () => meter.subagentSteps++,
        keep: (t) => transcripts.keep(t),
        beforeRequest: async (signal) => void (await turns.holdForWindow("the subagent's next model request", signal)),
        limits: { ...deps.config().subagent, maxSteps: Math.min(deps.config().subagent.maxSteps, deps.maxSteps()) },
      }),
  });
  const surfaces = new SurfaceEmitter({
    sessionId: record.id,
    attachments: () => attachments,
    router,
    broker,
    live: () => turns.open,
    record: (update) => state.appendLedger({ type: "update", update }),
    sendTo: (port, update) => port.sendUpdate(record.id, update),
  });
  const interaction = {
    sessionId: record.id,
    router,
    log,
    turnId: () => turns.turnId,
    emit: (u: Parameters<WiringHost["emit"]>[0]) => session.emit(u),
    commit: () => session.commit(),
    timeoutMs: () => deps.permissionTimeoutMs(),
  };
  const runtime = new SessionRuntime({
    sessionId: record.id,
    cwd: record.cwd,
    additionalDirectories: record.additionalDirectories,
    configDir: deps.configDir,
    log,
    env: () => session.toolEnv(),
    attachments: () => attachments,
    tools,
    interact: (request, signal) => relayInteraction(interaction, request, signal),
    notice: (text) => session.notices.add(text),
  });
  const windows = {
    any: () => [...attachments].some((p) => !p.closed),
    waitForAttach: (timeoutMs: number, signal: AbortSignal) => router.waitForAttach(timeoutMs, signal),
  };
  port = turnPort({ session, state, tools, runtime, meter, inbox, deps, checkpoints, windows });
  turns = new TurnRunner(port);
  const status = new StatusReporter({
    sessionId: record.id,
    record,
    attachments,
    inbox,
    meter,
    config: () => deps.config(),
    grants: () => tools.memory.grants(),
    running: () => turns.running,
    held: () => turns.held,
    queued: () => turns.queued,
    pending: () => [...broker.pending.values()],
    context: () => turns.context(),
    jobs: () => jobs.list(),
  });
  return { router, broker, tools, surfaces, runtime, turns, status, jobs, checkpoints, transcripts };
}
