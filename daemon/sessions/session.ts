/**
 * A session belongs to the daemon, not to a connection: windows attach and detach, the turn runs on,
 * and every update is recorded in the ledger before it fans out to every attached window. The
 * session owns state (record, ledger, settings, windows); the agent (agent/turn-runner.ts) owns the
 * turn and reaches the session through its port (turn-port.ts). Callers speak to it in verbs: its
 * parts (parts.ts) are its own.
 */
import type { ContentBlock, McpServer } from "../../shared/acp-schemas.js";
import type { Inbox, InboxItem, Intent } from "../inbox/inbox.js";
import { replayLedger } from "../ledger/replay.js";
import type { Logger } from "../log/log.js";
import { commandAnswer, turnInputFor, type CommandHostParts } from "./command-host.js";
import { configOptions, modeState } from "./controls.js";
import type { SessionDeps } from "./deps.js";
import { filterEnvironment, windowFacts } from "./environment.js";
import { InboxDriver } from "./inbox-driver.js";
import { StartNotices } from "./notices.js";
import { buildParts, type SessionParts } from "./parts.js";
import { promptToText } from "./prompt-text.js";
import { SessionState } from "./session-state.js";
import { setControl, type ControlId } from "./settings.js";
import type { OperatorStatus } from "./status.js";
import type { ChatMessage, ClientPort, SessionActivity, SessionRecord, SessionStart, SessionUpdate, StopReason } from "./types.js";

export class Session {
  private readonly log: Logger;
  private readonly state: SessionState;
  private readonly parts: SessionParts;
  private readonly driver: InboxDriver;
  private readonly notices = new StartNotices();
  /** The creating window's environment, in memory only, for provider keys; tools get `record.environment`. */
  private providerEnv: Readonly<Record<string, string | undefined>> | undefined;

  private readonly deps: SessionDeps;

  constructor(record: SessionRecord, history: ChatMessage[], deps: SessionDeps, inbox: Inbox, start: SessionStart = {}) {
    this.deps = deps;
    this.log = deps.log.child({ sessionId: record.id });
    // A failed write reaches the parts once they exist: nothing is written before.
    this.state = new SessionState(record, history, deps.store, (err) => this.parts.faults.faulted(err));
    this.driver = new InboxDriver(this, inbox, this.log);
    this.parts = buildParts({ log: this.log, notices: this.notices, providerEnv: () => this.providerEnv }, this.state, inbox, deps);
    const { prompt, providerEnv, notices = [] } = start;
    if (prompt) this.state.setInstructionFiles(prompt.files);
    this.notices.add(...(prompt?.notices ?? []), ...notices);
    this.providerEnv = providerEnv;
    if (history.length === 0) this.state.appendHistory({ role: "system", content: prompt?.text ?? "" });
  }

  get id(): string {
    return this.state.id;
  }

  /** The record as it stands; it changes only through the session's verbs. */
  get record(): Readonly<SessionRecord> {
    return this.state.record;
  }

  get running(): boolean {
    return this.parts.turns.running;
  }

  /** Something runs or waits to run: new work queues behind it. */
  get busy(): boolean {
    const turns = this.parts.turns;
    return turns.running || turns.queued > 0 || this.driver.pumping;
  }

  get acceptsSteers(): boolean {
    return this.parts.turns.acceptsSteers;
  }

  get windowCount(): number {
    return this.parts.attachments.size;
  }

  activity(): SessionActivity {
    const { attachments, broker, jobs } = this.parts;
    return {
      windows: attachments.size,
      running: this.running,
      busy: this.busy,
      questions: broker.pending.size,
      jobs: jobs.running(),
      queued: this.parts.inbox.depth(),
    };
  }

  /**
   * A window opens the session: `created` when it made it (new, fork: attached at once), else it loads (`replay`: the whole
   * ledger, the window added in the tick it catches up so no update falls between; `loaded` wakes what waits for a window)
   * or resumes. Its environment and umask fill what the session lacks, its MCP servers connect, its commands load.
   */
  async open(window: ClientPort, how: { mcpServers: McpServer[]; created?: boolean; replay?: boolean }): Promise<void> {
    if (how.created) this.parts.attachments.attach(window);
    else this.adoptWindow(window);
    // A window that loads again gets the whole history again, once.
    if (how.replay) this.detach(window);
    this.parts.runtime.connectMcp(how.mcpServers);
    await this.parts.runtime.refreshCommands();
    if (how.replay) await replayLedger(this.state, this.deps.store, window, () => this.parts.attachments.add(window));
    else if (!how.created) this.parts.attachments.attach(window);
  }

  /** session/load has answered: a turn held for a window, or a question waiting for one, goes on. */
  loaded(): void {
    this.parts.attachments.wake();
  }

  /** After the window's answer (new, fork, resume) or at the end of the replay (load): start notices, then the slash menu. */
  greet(window: ClientPort): void {
    const notices = this.notices.take();
    if (notices) this.emit(notices);
    this.parts.runtime.sendCommands(window);
  }

  /** The window leaves (close, a dropped connection); false when it was not attached. */
  detach(window: ClientPort): boolean {
    return this.parts.attachments.detach(window);
  }

  /** Records an update in the ledger and sends it to every attached window but `exclude`. */
  emit(update: SessionUpdate, exclude?: ClientPort): void {
    this.parts.emit(update, exclude);
  }

  /** Persists the record and waits for the disk: a commit point. */
  commit(): Promise<void> {
    return this.state.commit();
  }

  /** Where `session/list` finds this session while the store's index does not hold it yet. */
  unindexedListing(): ReturnType<SessionState["unindexedListing"]> {
    return this.state.unindexedListing();
  }

  /**
   * Runs one prompt: a built-in command answers locally, a custom command expands, anything else goes to the model. A prompt
   * that arrives during a turn waits for it and runs next. A window that prompts a session it has not attached to attaches now.
   */
  prompt(blocks: ContentBlock[], origin?: ClientPort, messageId?: string): Promise<StopReason> {
    if (origin) this.parts.attachments.attach(this.adoptWindow(origin));
    return this.runPrompt(blocks, origin, undefined, messageId);
  }

  /** Runs a queued follow-up as a turn of its own, shown to every window (the inbox driver's). */
  runFollowup(item: InboxItem): Promise<StopReason> {
    return this.runPrompt([{ type: "text", text: item.text }], undefined, item);
  }

  cancel(): void {
    this.parts.turns.cancel();
  }

  /** A steer from a window (its prompt's text): into the running turn, else in line. */
  steer(blocks: ContentBlock[]): ReturnType<InboxDriver["steer"]> {
    return this.driver.steer(promptToText(blocks));
  }

  enqueue(text: string, intent: Intent, idempotencyKey?: string): ReturnType<InboxDriver["enqueue"]> {
    return this.driver.enqueue(text, intent, idempotencyKey);
  }

  listInbox(): object {
    return this.driver.list();
  }

  inboxItem(itemId: string): ReturnType<InboxDriver["get"]> {
    return this.driver.get(itemId);
  }

  updateInboxItem(itemId: string, text: string): Promise<object> {
    return this.driver.update(itemId, text);
  }

  deleteInboxItem(itemId: string): Promise<void> {
    return this.driver.delete(itemId);
  }

  moveInboxItem(itemId: string, toIndex: number): Promise<void> {
    return this.driver.move(itemId, toIndex);
  }

  /** Pauses or resumes the inbox; resuming starts queued work when idle. Returns the paused flag. */
  setInboxPaused(paused: boolean): Promise<boolean> {
    return this.driver.setPaused(paused);
  }

  retryInboxItem(itemId: string): Promise<void> {
    return this.driver.retry(itemId);
  }

  refreshInboxItem(itemId: string): void {
    this.driver.refresh(itemId);
  }

  /** reloadExtensions: now when idle, else once the turn ends (`{queued: true}`); the notice is recorded like a command's answer. */
  reloadExtensions(): Promise<{ queued: true } | Record<string, never>> {
    return this.driver.reload(async () => this.emit(commandAnswer(await this.reloadRuntime())));
  }

  /** Rebuilds plugins, MCP servers and commands atomically, then the system prompt; returns the notice (reloadExtensions, /reload). */
  private async reloadRuntime(): Promise<string> {
    await this.parts.runtime.reload();
    return this.state.refreshSystemPrompt(this.deps.configDir, this.parts.runtime.skipped);
  }

  /** `modes` and `configOptions` as ACP shows them (controls.ts). */
  controls(): { modes: ReturnType<typeof modeState>; configOptions: ReturnType<typeof configOptions> } {
    return { modes: modeState(this.record), configOptions: configOptions(this.record, this.deps.config()) };
  }

  /** Changes a control (settings.ts); the other windows hear of it, `origin` excepted. */
  setControl(id: ControlId, value: string, origin: ClientPort | undefined): Promise<void> {
    return setControl(this.parts.settings, id, value, origin);
  }

  /** `/env reload`: the session's tools inherit `port`'s environment from now on. */
  private async takeEnvironment(port: ClientPort): Promise<string[]> {
    const environment = filterEnvironment(port.env, this.deps.config().shellEnvironment);
    this.state.setEnvironment(environment);
    this.providerEnv = port.env;
    await this.commit();
    return Object.keys(environment).sort();
  }

  /** The `_reasonix.io/session/status` object (schema version 1). */
  statusSnapshot(): Record<string, unknown> {
    return this.parts.status.snapshot();
  }

  /** What an operator's /status shows of this session. */
  operatorStatus(): OperatorStatus {
    return this.parts.status.operator();
  }

  /** The daemon died during this turn: said in the ledger, every tool call the model waited on closed, nothing re-run. */
  async markInterrupted(): Promise<void> {
    this.parts.attachments.send(this.state.markInterrupted());
    await this.commit();
  }

  /** The store takes writes again: the failed turn is closed in the ledger (store-fault.ts). */
  repairAfterStoreFault(): Promise<void> {
    return this.parts.faults.repair();
  }

  /** The daemon stops: saved, its MCP servers ended, its background jobs too (none outlives the daemon). */
  async shutdown(): Promise<void> {
    await this.commit().catch(() => undefined);
    await this.parts.runtime.close().catch(() => undefined);
    await this.parts.jobs.killAll().catch(() => undefined);
  }

  /** Cancels the turn and refuses further prompts; history stays in the store. Returns its MCP servers' ending, which the daemon waits for before it exits. */
  async stop(): Promise<{ closing: Promise<void> }> {
    this.driver.stop();
    const closing = this.parts.runtime.close();
    await this.parts.turns.stop();
    await this.parts.jobs.killAll();
    this.parts.tools.dispose();
    // The history is stored up to its last commit point; a failing disk must not keep the session open.
    await this.commit().catch((err: unknown) => this.log.warn({ err }, "final save of a stopping session failed"));
    return { closing };
  }

  /** A window attaches (load, resume, or a rejoining shim's prompt ahead of its resume): its environment and umask fill what the session lacks. */
  private adoptWindow(port: ClientPort): ClientPort {
    this.providerEnv ??= port.env;
    this.state.fillWindowFacts(windowFacts(port, this.deps.config().shellEnvironment));
    return port;
  }

  private async runPrompt(blocks: ContentBlock[], origin: ClientPort | undefined, queued?: InboxItem, messageId?: string): Promise<StopReason> {
    // A failed store is tried again now, so a turn that failed with it is closed in the ledger before this one.
    if (this.deps.store.failure) await this.deps.store.retryNow();
    const input = await turnInputFor(this.hostParts(), blocks, origin, messageId);
    // A prompt that must wait is committed to the inbox first, so a crash cannot lose it.
    const parked = !queued && this.busy ? (await this.parts.inbox.enqueue({ text: input.shownText, intent: "followup", source: "prompt" })).item : undefined;
    try {
      return await this.parts.turns.run(input, async () => {
        if (parked) await this.parts.inbox.remove(parked.id);
      });
    } finally {
      this.driver.wake();
    }
  }

  private hostParts(): CommandHostParts {
    const { settings, broker, runtime, tools, surfaces, turns, jobs, checkpoints, transcripts } = this.parts;
    const session = {
      takeEnvironment: (port: ClientPort) => this.takeEnvironment(port),
      reloadRuntime: () => this.reloadRuntime(),
      model: () => this.deps.createModel(this.record.model, this.providerEnv ?? {}, this.record.effort),
    };
    return { session, settings, broker, runtime, tools, deps: this.deps, surfaces, turns, jobs, checkpoints, transcripts };
  }
}
