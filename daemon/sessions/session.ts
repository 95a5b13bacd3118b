/**
 * A session belongs to the daemon, not to a connection: windows attach and detach, the turn runs on,
 * and every update is recorded in the ledger before it fans out to every attached window.
 */
import { randomUUID } from "node:crypto";
import { RpcError } from "../../shared/jsonrpc.js";
import type { ContentBlock } from "../../shared/acp-schemas.js";
import type { ContentBlock as AcpContentBlock } from "@agentclientprotocol/sdk";
import type { Logger } from "../log.js";
import { keys, type Store } from "../store/store.js";
import { runTurn } from "../agent/turn.js";
import { systemPrompt } from "../agent/system-prompt.js";
import type { ChatModel, Usage } from "../provider/types.js";
import { EditorRouter } from "./editor-router.js";
import { PermissionBroker } from "./permission-broker.js";
import { SessionTools } from "./session-tools.js";
import { SessionWriter } from "./writer.js";
import { promptToText, titleFrom } from "./prompt-text.js";
import type { ChatMessage, ClientPort, LedgerBody, LedgerEntry, SessionRecord, SessionUpdate, StopReason } from "./types.js";

const REPLAY_HIGH_WATER = 1024 * 1024;

export interface SessionDeps {
  store: Store;
  log: Logger;
  maxSteps(): number;
  permissionTimeoutMs(): number;
  /** Builds the model for a reference; throws RpcError -32000 when no key is configured. */
  createModel(ref: string, env: Record<string, string | undefined>): ChatModel;
}

interface ActiveTurn {
  id: string;
  controller: AbortController;
  origin: ClientPort | undefined;
  open: boolean;
}

export class Session {
  readonly attachments = new Set<ClientPort>();
  env: Record<string, string | undefined> = {};
  private readonly writer: SessionWriter;
  private readonly log: Logger;
  private active: ActiveTurn | undefined;
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;
  private stopped = false;
  readonly router: EditorRouter;
  readonly broker: PermissionBroker;
  private readonly tools: SessionTools;

  constructor(
    readonly record: SessionRecord,
    private readonly historyMessages: ChatMessage[],
    private readonly deps: SessionDeps,
  ) {
    this.writer = new SessionWriter(deps.store, deps.log);
    this.log = deps.log.child({ sessionId: record.id });
    this.router = new EditorRouter(() => this.attachments, () => this.active?.origin);
    this.broker = new PermissionBroker(record.id, this.router, () => deps.permissionTimeoutMs());
    this.tools = new SessionTools({
      record,
      env: () => this.env,
      emit: (u) => this.emitForTurn(u),
      router: this.router,
      broker: this.broker,
      recordDecision: (id, outcome) => this.recordDecision(id, outcome),
    });
    if (historyMessages.length === 0) {
      this.appendHistory({ role: "system", content: systemPrompt(record.cwd, record.additionalDirectories) });
    }
  }

  get id(): string {
    return this.record.id;
  }

  get running(): boolean {
    return this.active !== undefined;
  }

  get queuedPrompts(): number {
    return this.waiting;
  }

  attach(port: ClientPort): void {
    this.attachments.add(port);
    this.router.attached();
  }

  detach(port: ClientPort): void {
    this.attachments.delete(port);
  }

  /** Records an update in the ledger and sends it to every attached window but `exclude`. */
  emit(update: SessionUpdate, exclude?: ClientPort): void {
    this.appendLedger({ type: "update", update });
    for (const port of this.attachments) {
      if (port !== exclude && !port.closed) port.sendUpdate(this.id, update);
    }
  }

  history(): readonly ChatMessage[] {
    return this.historyMessages;
  }

  private appendHistory(msg: ChatMessage): void {
    const n = this.historyMessages.length;
    this.historyMessages.push(msg);
    this.record.historyLength = this.historyMessages.length;
    this.writer.put(keys.history(this.id, n), msg);
  }

  private appendLedger(entry: LedgerBody): void {
    const seq = ++this.record.lastSeq;
    this.writer.put(keys.event(this.id, seq), { ...entry, seq, at: new Date().toISOString() });
  }

  private saveRecord(): void {
    this.writer.put(keys.session(this.id), this.record);
  }

  /** Persists the record and waits for the disk: a commit point. */
  async commit(): Promise<void> {
    this.saveRecord();
    await this.writer.flush(true);
  }

  /**
   * Sends the whole ledger to `port`, then attaches it in the same tick as the last check, so no
   * update falls between replay and live delivery.
   */
  async replayTo(port: ClientPort): Promise<void> {
    let sent = 0;
    for (;;) {
      await this.writer.flush(false);
      const entries = await this.deps.store.range<LedgerEntry>(keys.eventPrefix(this.id), {
        from: keys.event(this.id, sent + 1),
      });
      for (const { value } of entries) {
        if (value.seq <= sent) continue;
        sent = value.seq;
        if (value.type === "update" && !port.closed) port.sendUpdate(this.id, value.update);
        // A long history goes out at the pace the window takes it, not all into memory at once.
        while (port.backlog() > REPLAY_HIGH_WATER && !port.closed) await new Promise((r) => setTimeout(r, 2));
      }
      if (sent >= this.record.lastSeq) {
        this.attach(port);
        return;
      }
    }
  }

  /** Runs one prompt as a turn; a prompt that arrives during a turn waits for it and runs next. */
  async prompt(blocks: ContentBlock[], origin: ClientPort | undefined): Promise<StopReason> {
    const text = promptToText(blocks);
    if (text.length === 0) throw RpcError.invalidParams("prompt is empty");
    const model = this.deps.createModel(this.record.model, this.env);
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    this.waiting++;
    try {
      await previous;
    } finally {
      this.waiting--;
    }
    try {
      if (this.stopped) return "cancelled";
      return await this.runPromptTurn(blocks, text, model, origin);
    } finally {
      release();
    }
  }

  private async runPromptTurn(
    blocks: ContentBlock[],
    text: string,
    model: ChatModel,
    origin: ClientPort | undefined,
  ): Promise<StopReason> {
    const turn: ActiveTurn = { id: randomUUID(), controller: new AbortController(), origin, open: true };
    this.active = turn;
    this.record.status = "running";
    this.appendLedger({ type: "turn_start", turnId: turn.id });
    // Other windows see the prompt itself; the window that typed it already shows it.
    for (const block of blocks) this.emit({ sessionUpdate: "user_message_chunk", content: block as AcpContentBlock }, origin);
    this.appendHistory({ role: "user", content: text });
    this.touch();
    if (!this.record.title) {
      this.record.title = titleFrom(text);
      this.emit({ sessionUpdate: "session_info_update", title: this.record.title, updatedAt: this.record.updatedAt });
    }
    await this.commit();

    let stopReason: StopReason = "end_turn";
    let failure: unknown;
    try {
      stopReason = await runTurn(
        {
          emit: (u) => this.emitForTurn(u),
          appendHistory: (m) => this.appendHistory(m),
          history: () => this.historyMessages,
          toolSpecs: () => this.tools.toolSpecs(),
          runTool: (call, signal) => this.tools.run(call, signal),
          onUsage: (u) => this.onUsage(u),
        },
        model,
        turn.controller.signal,
        { maxSteps: this.deps.maxSteps() },
      );
    } catch (err) {
      failure = err;
    } finally {
      turn.open = false;
    }
    if (turn.controller.signal.aborted) {
      stopReason = "cancelled";
      failure = undefined;
    }
    const error = failure === undefined ? undefined : failure instanceof Error ? failure.message : String(failure);
    this.appendLedger({ type: "turn_end", turnId: turn.id, ...(error ? { error } : { stopReason }) });
    this.record.status = "idle";
    this.touch();
    this.active = undefined;
    await this.commit();
    if (failure !== undefined) {
      this.log.warn({ turnId: turn.id, error }, "turn failed");
      throw failure instanceof RpcError ? failure : RpcError.internal("The turn failed inside the agent.");
    }
    return stopReason;
  }

  /** Updates of a turn that has answered are dropped: nothing of a turn follows its stop reason. */
  private emitForTurn(update: SessionUpdate): void {
    if (this.active?.open) this.emit(update);
  }

  private onUsage(_usage: Usage): void {}

  private touch(): void {
    this.record.updatedAt = new Date().toISOString();
  }

  /**
   * The daemon died during this session's turn: say so in the ledger, and close every tool call the
   * model was waiting on so the next request is well-formed. Nothing is re-run.
   */
  async markInterrupted(): Promise<void> {
    const answered = new Set(this.historyMessages.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    for (const m of [...this.historyMessages]) {
      for (const call of m.tool_calls ?? []) {
        if (!answered.has(call.id)) {
          this.appendHistory({
            role: "tool",
            tool_call_id: call.id,
            content: "Interrupted: the agent daemon stopped before this tool call finished; it may or may not have taken effect.",
          });
        }
      }
    }
    this.appendLedger({ type: "interrupted" });
    this.emit({
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "\n\n[interrupted] The agent daemon stopped during this turn. Send a prompt to continue." },
    });
    this.record.status = "interrupted";
    await this.commit();
  }

  /** A permission decision is a commit point: it survives a crash with the updates before it. */
  async recordDecision(toolCallId: string, outcome: string): Promise<void> {
    this.appendLedger({ type: "permission", toolCallId, outcome });
    await this.commit();
  }

  cancel(): void {
    this.active?.controller.abort(new Error("cancelled"));
  }

  /** Cancels the turn and refuses further prompts; history stays in the store. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel();
    await this.tail;
    await this.commit();
  }
}
