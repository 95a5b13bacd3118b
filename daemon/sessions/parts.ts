/**
 * How a session's parts are made and joined: its windows (attachments, editor router, permission
 * broker), the records kept beside it (jobs, checkpoints, subagent transcripts), its tools, plugin
 * surfaces, runtime (commands, plugins, MCP servers), status, and the agent's turn runner. Each part
 * is given the few facts and callbacks it needs; the running turn reaches them through `TurnLink`.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { skillLibrary } from "../agent/skills.js";
import { subagentRunner } from "../agent/subagent.js";
import { TurnRunner } from "../agent/turn-runner.js";
import type { Inbox } from "../inbox/inbox.js";
import type { Logger } from "../log/log.js";
import type { ChatModel } from "../provider/types.js";
import { Checkpoints } from "../records/checkpoints.js";
import { jobHooks } from "../records/job-records.js";
import { TaskTranscripts } from "../records/task-transcripts.js";
import { JobTable } from "../tools/jobs.js";
import { ApprovalMemory } from "../tools/permissions.js";
import { SessionSandbox } from "../tools/sandbox.js";
import { SessionHooks } from "../hooks/session-hooks.js";
import { Attachments } from "../windows/attachments.js";
import { EditorRouter } from "../windows/editor-router.js";
import { relayInteraction } from "../windows/interaction.js";
import { PermissionBroker } from "../windows/permission-broker.js";
import type { ClientPort } from "../windows/port.js";
import { SurfaceEmitter } from "../windows/surfaces.js";
import type { SessionDeps } from "./deps.js";
import { sessionUmask } from "./environment.js";
import { SessionMeter } from "./meter.js";
import type { StartNotices } from "./notices.js";
import { SessionRuntime } from "./runtime.js";
import type { SessionState } from "./session-state.js";
import { SessionTools } from "./session-tools.js";
import { approvePlan, reportGoal, setMode, type SettingsHost } from "./settings.js";
import { StatusReporter } from "./status.js";
import { StoreFaultRepair } from "./store-fault.js";
import { TurnLink } from "./turn-link.js";
import { countUsage, SessionTurnPort } from "./turn-port.js";

/** What only the session itself holds: the parts call back into it for these. */
export interface PartsHost {
  readonly log: Logger;
  readonly notices: StartNotices;
  /** The creating window's environment, in memory only, for provider keys. */
  providerEnv(): Readonly<Record<string, string | undefined>> | undefined;
}

export interface SessionParts {
  link: TurnLink;
  attachments: Attachments;
  router: EditorRouter;
  broker: PermissionBroker;
  /** Records an update in the ledger, then sends it to every attached window but `exclude`. */
  emit(update: SessionUpdate, exclude?: ClientPort): void;
  /** A permission decision, recorded and committed (a commit point). */
  recordDecision(toolCallId: string, outcome: string): Promise<void>;
  settings: SettingsHost;
  jobs: JobTable;
  checkpoints: Checkpoints;
  transcripts: TaskTranscripts;
  status: StatusReporter;
  tools: SessionTools;
  surfaces: SurfaceEmitter;
  runtime: SessionRuntime;
  turns: TurnRunner<ClientPort>;
  inbox: Inbox;
  faults: StoreFaultRepair;
}

/** The parts every other part is built on: windows, the ledger's writers, settings, records. */
type Base = Pick<
  SessionParts,
  "link" | "attachments" | "router" | "broker" | "emit" | "recordDecision" | "settings" | "jobs" | "checkpoints" | "transcripts" | "faults"
>;

interface Given {
  host: PartsHost;
  state: SessionState;
  meter: SessionMeter;
  inbox: Inbox;
  deps: SessionDeps;
}

export function buildParts(host: PartsHost, state: SessionState, inbox: Inbox, deps: SessionDeps): SessionParts {
  // The cost ledger so far is kept in the record, so costs survive restarts.
  const meter = new SessionMeter(state.record.costs);
  const given: Given = { host, state, meter, inbox, deps };
  const base = baseParts(given);
  const memory = new ApprovalMemory();
  const status = statusOf(given, base, memory);
  const hooks = hooksOf(given, base);
  const tools = toolsOf(given, base, memory, hooks, (event) => status.notify(event));
  const surfaces = surfacesOf(given, base);
  const runtime = runtimeOf(given, base, tools);
  const port = new SessionTurnPort({
    session: {
      id: state.id,
      log: host.log,
      get providerEnv() {
        return host.providerEnv();
      },
      emit: base.emit,
      notifyStatus: (event) => status.notify(event),
      noteStoreFault: (turnId, message) => base.faults.noteTurn(turnId, message),
      leaveGoalMode: () => setMode(base.settings, "normal", undefined),
    },
    state,
    attachments: base.attachments,
    tools,
    runtime,
    meter,
    inbox,
    deps,
    checkpoints: base.checkpoints,
    hooks,
  });
  const turns = new TurnRunner(port);
  base.link.bind(turns);
  return { ...base, status, tools, surfaces, runtime, turns, inbox };
}

export function baseParts({ host, state, deps }: Given): Base {
  const link = new TurnLink();
  const attachments = new Attachments(state.id);
  const router = new EditorRouter(attachments, () => link.origin);
  const broker = new PermissionBroker(state.id, router, () => deps.permissionTimeoutMs());
  const emit = (update: SessionUpdate, exclude?: ClientPort): void => {
    state.appendLedger({ type: "update", update });
    attachments.send(update, exclude);
  };
  const recordDecision = async (toolCallId: string, outcome: string): Promise<void> => {
    state.appendLedger({ type: "permission", toolCallId, outcome });
    await state.commit();
  };
  const settings: SettingsHost = { record: state.record, state, broker, config: () => deps.config(), emit, commit: () => state.commit(), recordDecision };
  const jobs = new JobTable(jobHooks(deps.store, state.id, host.log));
  const checkpoints = new Checkpoints(deps.store, state.id, state.record.cwd, () => sessionUmask(state.record));
  const transcripts = new TaskTranscripts(deps.store, state.id, host.log);
  const faults = new StoreFaultRepair(state, link, host.log);
  return { link, attachments, router, broker, emit, recordDecision, settings, jobs, checkpoints, transcripts, faults };
}

function statusOf({ state, meter, inbox, deps }: Given, base: Base, memory: ApprovalMemory): StatusReporter {
  const { link, broker, jobs } = base;
  return new StatusReporter({
    sessionId: state.id,
    record: state.record,
    attachments: base.attachments,
    inbox,
    meter,
    config: () => deps.config(),
    grants: () => memory.grants(),
    running: () => link.running,
    held: () => link.held,
    queued: () => link.queued,
    pending: () => [...broker.pending.values()],
    context: () => link.context(),
    jobs: () => jobs.list(),
  });
}

/** The model a turn (or its subagent) talks to: the session's model, effort and provider keys. */
export function modelOf({ host, state, deps }: Pick<Given, "host" | "state" | "deps">): ChatModel {
  const r = state.record;
  return deps.createModel(r.model, host.providerEnv() ?? {}, r.effort);
}

/** Claude Code-style hooks (hooks/): run as the user, unsandboxed, the project's only once trusted. */
function hooksOf({ host, state, deps }: Given, base: Base): SessionHooks {
  const record = state.record;
  return new SessionHooks({
    sessionId: state.id,
    cwd: record.cwd,
    additionalDirectories: record.additionalDirectories,
    configDir: deps.configDir,
    store: deps.store,
    log: host.log,
    env: () => ({ ...(state.record.environment ?? {}) }),
    umask: () => sessionUmask(state.record),
    emit: (u) => base.link.emit(u),
    ask: async (toolCall, options, signal) => {
      const outcome = await base.broker.ask(toolCall, options, signal);
      await base.recordDecision(toolCall.toolCallId, outcome.outcome === "selected" ? outcome.optionId : "cancelled");
      return outcome;
    },
    resumed: () => state.history().some((m) => m.role === "user"),
  });
}

function toolsOf(given: Given, base: Base, memory: ApprovalMemory, hooks: SessionHooks, notifyStatus: (e: "usage") => void): SessionTools {
  const { state, meter, deps } = given;
  const { link, settings, checkpoints, transcripts } = base;
  const record = state.record;
  const sandbox = new SessionSandbox({
    status: () => deps.sandbox(),
    hidden: deps.hiddenDirs,
    network: () => deps.config().sandbox.network,
    tmpRoot: deps.sandboxTmp,
  });
  const host = {
    record,
    env: () => ({ ...(state.record.environment ?? {}) }),
    emit: (u: SessionUpdate) => link.emit(u),
    router: base.router,
    broker: base.broker,
    recordDecision: base.recordDecision,
    allowPrivateNetwork: () => deps.config().webFetch.allowPrivateNetwork,
    daemonTools: deps.tools,
    controls: {
      mode: () => record.mode,
      approvePlan: (plan: string, steps: string[] | undefined, toolCallId: string, signal: AbortSignal) =>
        approvePlan(settings, plan, steps, toolCallId, signal),
      reportGoal: (status: "continue" | "complete" | "blocked", summary: string) => reportGoal(settings, status, summary),
    },
    jobs: base.jobs,
    skills: skillLibrary(() => state.record, deps.configDir),
    sandbox,
    beforeWrite: (path: string, read: () => Promise<{ text: string; encoding: string }>) => checkpoints.capture(path, read),
    beforeChange: (title: string, signal: AbortSignal) => link.hold(`the tool call "${title}"`, signal),
    hooks,
  };
  return new SessionTools(
    {
      ...host,
      subagent: (runner, toolCallId) =>
        subagentRunner({
          runner,
          toolCallId,
          createModel: () => modelOf(given),
          onUsage: (u) => link.emit(countUsage(given, u, notifyStatus)),
          countStep: () => meter.subagentSteps++,
          keep: (t) => transcripts.keep(t),
          beforeRequest: async (signal) => void (await link.hold("the subagent's next model request", signal)),
          limits: { ...deps.config().subagent, maxSteps: Math.min(deps.config().subagent.maxSteps, deps.maxSteps()) },
        }),
    },
    memory,
  );
}

function surfacesOf({ state }: Given, base: Base): SurfaceEmitter {
  return new SurfaceEmitter({
    sessionId: state.id,
    attachments: () => base.attachments,
    router: base.router,
    broker: base.broker,
    live: () => base.link.open,
    record: (update) => state.appendLedger({ type: "update", update }),
    sendTo: (port, update) => port.sendUpdate(state.id, update),
  });
}

function runtimeOf({ host, state, deps }: Given, base: Base, tools: SessionTools): SessionRuntime {
  const record = state.record;
  const interaction = {
    sessionId: state.id,
    router: base.router,
    log: host.log,
    turnId: () => base.link.turnId,
    emit: (u: SessionUpdate) => base.emit(u),
    commit: () => state.commit(),
    timeoutMs: () => deps.permissionTimeoutMs(),
  };
  return new SessionRuntime({
    sessionId: state.id,
    cwd: record.cwd,
    additionalDirectories: record.additionalDirectories,
    configDir: deps.configDir,
    log: host.log,
    env: () => ({ ...(state.record.environment ?? {}) }),
    attachments: () => base.attachments,
    tools,
    interact: (request, signal) => relayInteraction(interaction, request, signal),
    notice: (text) => host.notices.add(text),
    mcpWaitMs: () => deps.config().mcpStartSeconds * 1000,
  });
}
