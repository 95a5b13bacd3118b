/**
 * A session's durable state: its record, its model conversation and its ledger, and how they reach
 * the store. Memory may run ahead of the store only by what is buffered for the next flush; once a
 * write fails, the state is "faulted": nothing more is written, commits fail with the same cause,
 * and `reload()` puts memory back to exactly what the store holds before anything is written again.
 */
import { RpcError } from "../../shared/jsonrpc.js";
import { keys, type JsonCursor, type Store } from "../store/store.js";
import { StoreWriteError } from "../store/errors.js";
import { SessionWriter } from "../ledger/writer.js";
import { ChunkJoiner } from "../ledger/ledger-join.js";
import { isConversation, withMessageId } from "../ledger/message-ids.js";
import { indexKeys, listEntry, reindexOps, sortKey, type Listing } from "../records/list-index.js";
import { buildSystemPrompt, instructionsNotice } from "../agent/instructions.js";
import type { CompactionInfo } from "../agent/compactor.js";
import type { GoalState } from "../agent/goal.js";
import type { Usage } from "../provider/types.js";
import { titleFrom } from "./prompt-text.js";
import type { ChatMessage, LedgerBody, LedgerEntry, SessionRecord, SessionUpdate } from "./types.js";
import { errorText } from "../../shared/error-text.js";

/** The controls a user changes (settings.ts): set together, persisted at the next commit. */
export type Controls = Pick<SessionRecord, "mode" | "model" | "effort" | "toolApproval" | "goal">;

/**
 * The stored conversation of `record`, and the record brought up to what the store holds: chunks
 * are flushed between commit points, so the ledger may run ahead of the record's `lastSeq`.
 */
export async function storedConversation(store: Store, record: SessionRecord): Promise<ChatMessage[]> {
  const history = (await store.range<ChatMessage>(keys.historyPrefix(record.id))).map((e) => e.value);
  const [last] = await store.range<LedgerEntry>(keys.eventPrefix(record.id), { reverse: true, limit: 1 });
  record.lastSeq = Math.max(record.lastSeq, last?.value.seq ?? 0);
  record.historyLength = history.length;
  return history;
}

/** The answer an editor gets when the session could not be saved: the cause in the user's words. */
export function storeFailureError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const cause = err instanceof StoreWriteError ? err.message : `the store could not be written: ${errorText(err)}`;
  return RpcError.internal(`The session could not be saved: ${cause}`);
}

/**
 * Everything that changes a session's record goes through here (the structure test holds every
 * other file to it), so what is persisted, and when, is decided in one place.
 */
export class SessionState {
  private readonly writer: SessionWriter;
  private readonly chunks = new ChunkJoiner();
  private faultError: unknown;
  /** The list index keys the store holds for this session now. */
  private indexed: string[];
  /** This session's list entry as last made, with the folder list it was made from. */
  private listing: (Listing & { dirs: readonly string[] }) | undefined;

  /** The record as memory holds it; read-only outside: it changes through the methods below. */
  get record(): Readonly<SessionRecord> {
    return this.stored;
  }

  constructor(
    private readonly stored: SessionRecord,
    private readonly messages: ChatMessage[],
    private readonly store: Store,
    private readonly onFault: (err: unknown) => void,
  ) {
    this.writer = new SessionWriter(store, (err) => this.writeFailed(err));
    this.indexed = indexKeys(stored);
  }

  /** This session's list entry while the index does not hold it (no title yet); else undefined. */
  unindexedListing(): Listing | undefined {
    if (this.indexed.length !== 0) return undefined;
    const { updatedAt, cwd, title, additionalDirectories } = this.stored;
    const made = this.listing;
    // Made again only when what it shows changed: every session/list asks each live session.
    if (made?.entry.updatedAt === updatedAt && made.entry.cwd === cwd && made.entry.title === title && made.dirs === additionalDirectories) return made;
    this.listing = { sortKey: sortKey(this.stored), entry: listEntry(this.stored), dirs: additionalDirectories };
    return this.listing;
  }

  get id(): string {
    return this.stored.id;
  }

  /** The write failure memory has not been reloaded from yet. */
  get fault(): unknown {
    return this.faultError;
  }

  history(): ChatMessage[] {
    return this.messages;
  }

  appendHistory(msg: ChatMessage): void {
    const n = this.messages.length;
    this.messages.push(msg);
    this.stored.historyLength = this.messages.length;
    this.put(keys.history(this.id, n), msg);
  }

  /** A reload's new system prompt: the conversation's first message, replaced in memory and in the store. */
  replaceSystemPrompt(text: string): void {
    const msg: ChatMessage = { role: "system", content: text };
    if (this.messages.length === 0) {
      this.appendHistory(msg);
      return;
    }
    this.messages[0] = msg;
    this.put(keys.history(this.id, 0), msg);
  }

  /**
   * Rebuilds the system prompt (reloadExtensions, /reload); a different one replaces the
   * conversation's first message. `skipped` are other files the reload left out (command folders,
   * plugins), named in the same notice, which is returned.
   */
  async refreshSystemPrompt(configDir: string, skipped: readonly string[] = []): Promise<string> {
    const { text, files, notices, skills } = await buildSystemPrompt(this.stored, configDir);
    this.setInstructionFiles(files);
    const changed = this.messages[0]?.content !== text;
    if (changed) this.replaceSystemPrompt(text);
    await this.commit();
    return instructionsNotice(files, changed, [...notices, ...skipped], skills);
  }

  /**
   * Compaction: `messages` become the model history, in the store as in memory. Old keys past the
   * new end are deleted in the same batch as the new ones (the next commit), so a restart finds the
   * old history or the new one, never a mix. The array is refilled in place (the turn runner holds it).
   */
  replaceHistory(messages: ChatMessage[], info: CompactionInfo): void {
    const old = this.messages.length;
    this.messages.length = 0;
    this.messages.push(...messages);
    this.stored.historyLength = messages.length;
    messages.forEach((m, i) => this.put(keys.history(this.id, i), m));
    if (this.faultError === undefined) for (let i = messages.length; i < old; i++) this.writer.del(keys.history(this.id, i));
    // Until the next round is counted, the size is the compactor's calibrated estimate.
    this.stored.context = { promptTokens: info.tokensAfter, messages: messages.length };
    const { focus, ...rest } = info;
    const count = (this.stored.compaction?.count ?? 0) + 1;
    this.stored.compaction = { ...rest, ...(focus ? { focus } : {}), count, at: new Date().toISOString() };
  }

  /**
   * Records an entry. A chunk without a message id gets one of its own here, in place, so the
   * windows are sent what the ledger keeps; a conversation update notes the model history's
   * position, where a fork cut before it ends the history (fork.ts).
   */
  appendLedger(entry: LedgerBody): void {
    if (entry.type === "update") withMessageId(entry.update);
    if (entry.type === "update" && this.chunks.join(entry.update, this.writer.generation)) return;
    const seq = ++this.stored.lastSeq;
    const stored = { ...entry, ...(entry.type === "update" ? this.historyPosition(entry.update) : {}), seq, at: new Date().toISOString() };
    this.put(keys.event(this.id, seq), stored);
    this.chunks.opened(this.faultError === undefined ? stored : undefined, this.writer.generation);
  }

  /** Persists the record with everything before it and waits for the disk: a commit point. */
  async commit(): Promise<void> {
    if (this.faultError !== undefined) throw storeFailureError(this.faultError);
    this.put(keys.session(this.id), this.stored);
    const index = reindexOps(this.indexed, this.stored);
    for (const op of index.ops) {
      if (op.type === "put") this.put(op.key, op.value);
      else this.writer.del(op.key);
    }
    try {
      await this.writer.flush(true);
      this.indexed = index.keys;
    } catch (err) {
      throw storeFailureError(err);
    }
  }

  /** Writes what is buffered, unsynced; a failure is handled as a fault, not thrown. */
  async flush(): Promise<void> {
    await this.writer.flush(false).catch(() => undefined);
  }

  /**
   * Puts memory back to what the store holds (after a failed write, or when the failed write may
   * have landed after all). The conversation array is refilled in place: the turn runner holds it.
   */
  async reload(): Promise<void> {
    this.writer.discard();
    const stored = await this.store.get<SessionRecord>(keys.session(this.id));
    const history = await this.store.range<ChatMessage>(keys.historyPrefix(this.id));
    const [last] = await this.store.range<LedgerEntry>(keys.eventPrefix(this.id), { reverse: true, limit: 1 });
    if (stored) {
      const record = this.stored as unknown as Record<string, unknown>;
      for (const key of Object.keys(record)) if (!(key in stored)) delete record[key];
      Object.assign(this.stored, stored);
    }
    // Chunks are flushed between commit points, so the ledger may run ahead of the record.
    this.stored.lastSeq = Math.max(stored?.lastSeq ?? 0, last?.value.seq ?? 0);
    this.messages.length = 0;
    for (const { value } of history) this.messages.push(value);
    this.stored.historyLength = this.messages.length;
    this.indexed = stored ? indexKeys(stored) : [];
    this.faultError = undefined;
  }

  /**
   * Once the store takes writes again: back to what it holds (a write reported as failed may have
   * landed after all), and a failed turn it shows as running is closed with the failure, so a later
   * load shows what the windows were told. A turn whose start never reached the disk left nothing.
   */
  async closeFailedTurn(fault: { turnId: string; message: string } | undefined): Promise<void> {
    await this.reload();
    if (!fault || this.stored.status !== "running") return;
    this.appendLedger({ type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n[error] ${fault.message}` } } });
    this.appendLedger({ type: "turn_end", turnId: fault.turnId, error: fault.message });
    this.stored.status = "idle";
    await this.commit();
  }

  /**
   * The daemon died during this session's turn: say so in the ledger, and close every tool call the
   * model was waiting on so the next request is well-formed. Nothing is re-run. Returns the notice
   * for the windows (already recorded).
   */
  markInterrupted(): SessionUpdate {
    this.closeDanglingToolCalls("Interrupted: the agent daemon stopped before this tool call finished; it may or may not have taken effect.");
    this.appendLedger({ type: "interrupted" });
    const update: SessionUpdate = {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "\n\n[interrupted] The agent daemon stopped during this turn. Send a prompt to continue." },
    };
    this.appendLedger({ type: "update", update });
    this.stored.status = "interrupted";
    return update;
  }

  /** Answers every tool call the model is still waiting on, so the next request is well-formed. */
  closeDanglingToolCalls(answer: string): void {
    const answered = new Set(this.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    for (const m of [...this.messages]) {
      for (const call of m.tool_calls ?? []) if (!answered.has(call.id)) this.appendHistory({ role: "tool", tool_call_id: call.id, content: answer });
    }
  }

  /** Ledger records from `fromSeq` on, a page at a time, as their stored JSON text (session/load's replay reads them so). */
  ledgerCursor(fromSeq: number, limit: number, maxBytes: number): JsonCursor {
    return this.store.jsonCursor(keys.eventPrefix(this.id), { from: keys.event(this.id, fromSeq), limit, maxBytes });
  }

  /** Status `running` while a turn runs, `idle` after; both stamp `updatedAt` (the last activity). */
  setRunning(running: boolean): void {
    this.stored.status = running ? "running" : "idle";
    this.stored.updatedAt = new Date().toISOString();
  }

  /** A turn whose writes failed ended; memory was reloaded from a store that may still say running. */
  settleIdle(): void {
    this.stored.status = "idle";
  }

  /** The first prompt names the session: the title it got, or undefined when it had one. */
  nameFrom(text: string): string | undefined {
    if (this.stored.title) return undefined;
    this.stored.title = titleFrom(text);
    return this.stored.title;
  }

  /** A note for the model that rides along with the next user message (mode changes). */
  addNote(note: string): void {
    this.stored.notes = [...(this.stored.notes ?? []), note];
  }

  /** The notes waiting for the next user message; none wait after. */
  takeNotes(): string[] {
    const notes = this.stored.notes ?? [];
    this.stored.notes = undefined;
    return notes;
  }

  setControls(controls: Partial<Controls>): void {
    Object.assign(this.stored, controls);
  }

  setGoal(goal: GoalState | undefined): void {
    this.stored.goal = goal;
  }

  /** The model's report on the goal (update_goal); false when no goal is active. */
  reportGoal(report: Pick<GoalState, "summary"> & Partial<Pick<GoalState, "status">>): boolean {
    if (this.stored.mode !== "goal" || !this.stored.goal) return false;
    this.stored.goal = { ...this.stored.goal, ...report };
    return true;
  }

  /** A model round's usage: the totals, the cost ledger (`costs`, the meter's), the context it filled. */
  countRound(u: Usage, costs: unknown): void {
    const t = this.stored.usage ?? { rounds: 0, promptTokens: 0, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0, reasoningTokens: 0 };
    this.stored.usage = {
      rounds: t.rounds + 1,
      promptTokens: t.promptTokens + u.promptTokens,
      completionTokens: t.completionTokens + u.completionTokens,
      cacheHitTokens: t.cacheHitTokens + u.cacheHitTokens,
      cacheMissTokens: t.cacheMissTokens + u.cacheMissTokens,
      reasoningTokens: t.reasoningTokens + u.reasoningTokens,
    };
    this.stored.costs = costs;
    // The round's request was the history as it stands now (its answer is appended after this).
    this.stored.context = { promptTokens: u.promptTokens, messages: this.messages.length };
  }

  /** What the session's tools inherit from now on (`/env reload`). */
  setEnvironment(environment: Record<string, string>): void {
    this.stored.environment = environment;
  }

  /** A window that loads or resumes fills what the record lacks (environment.ts `windowFacts`). */
  fillWindowFacts(facts: Pick<SessionRecord, "environment" | "umask">): void {
    if (this.stored.environment === undefined && facts.environment) this.stored.environment = facts.environment;
    if (this.stored.umask === undefined && facts.umask !== undefined) this.stored.umask = facts.umask;
  }

  setInstructionFiles(files: ReadonlyArray<{ path: string }>): void {
    this.stored.instructionFiles = files.map((f) => f.path);
  }

  private historyPosition(update: SessionUpdate): { historyAt?: number; compactions?: number } {
    if (!isConversation(update)) return {};
    const compactions = this.stored.compaction?.count ?? 0;
    return { historyAt: this.messages.length, ...(compactions > 0 ? { compactions } : {}) };
  }

  private put(key: string, value: unknown): void {
    if (this.faultError === undefined) this.writer.put(key, value);
  }

  private writeFailed(err: unknown): void {
    if (this.faultError !== undefined) return;
    this.faultError = err;
    this.writer.discard();
    this.onFault(err);
  }
}
