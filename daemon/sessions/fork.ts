/**
 * session/fork: a new session holding another's conversation — its ledger (what the windows were
 * shown) and its model history — up to its last commit point, or up to and including one of its
 * messages. The parent is only read.
 *
 * Where the history is cut for a message: every conversation update in the ledger notes how long
 * the model history was when it was recorded (`historyAt`, session-state.ts). A fork that ends with
 * message M keeps the ledger up to the first conversation update after M's last chunk, and the
 * history as it stood when that update was recorded: the prompt M answered, M's own round when M is
 * an answer, nothing of what followed. Tool calls of that round that the fork's ledger does not
 * show are taken out of the history; those it shows but that have no result yet are closed as not
 * finished, in both, so the next request is well-formed.
 *
 * Refused, with -32602 naming `_meta["reasonix.io"].messageId`: an id the session does not have; a
 * message older than the last compaction (the summary that replaced the history before it also
 * covers what came after the message, so no history can be cut there: fork a later message, or the
 * whole session); a message of a ledger recorded before history positions were kept.
 */
import { RpcError } from "../../shared/jsonrpc.js";
import { keys, type BatchOp, type Store } from "../store/store.js";
import { isConversation, LedgerMessageIds } from "../ledger/message-ids.js";
import type { ChatMessage, LedgerEntry, SessionRecord, SessionUpdate } from "./types.js";

/** Ledger records read and written at once: a page stays a few MiB however long the session. */
const PAGE = 256;
const FIELD = '_meta["reasonix.io"].messageId';
const NOT_FINISHED = "Not finished: the session was forked while this tool call ran; in this fork it may or may not have taken effect.";

export interface ForkedConversation {
  /** The fork's last ledger sequence number. */
  lastSeq: number;
  /** The fork's model history (its first message is the parent's system prompt). */
  history: ChatMessage[];
  /** Everything the parent had committed was taken (no message named). */
  whole: boolean;
}

/** The parent's ledger from its first record to `lastSeq`, a page at a time. */
async function* ledger(store: Store, sessionId: string, lastSeq: number): AsyncGenerator<LedgerEntry> {
  let from = 1;
  while (from <= lastSeq) {
    const page = await store.range<LedgerEntry>(keys.eventPrefix(sessionId), { from: keys.event(sessionId, from), limit: PAGE });
    for (const { value } of page) {
      if (value.seq > lastSeq) return;
      yield value;
    }
    if (page.length < PAGE) return;
    from = page.at(-1)!.value.seq + 1;
  }
}

/** Where a fork ending with `messageId` stops: ledger records before `endSeq`, the first `historyLength` history messages. */
async function cutAt(store: Store, parent: SessionRecord, messageId: string): Promise<{ endSeq: number; historyLength: number }> {
  const ids = new LedgerMessageIds(parent.id);
  let found = false;
  let next: Extract<LedgerEntry, { type: "update" }> | undefined;
  for await (const entry of ledger(store, parent.id, parent.lastSeq)) {
    const update = entry.type === "update" ? entry.update : undefined;
    if (ids.next(entry.seq, update) === messageId) {
      // A message's chunks may be interleaved with another's: it ends with its last one.
      found = true;
      next = undefined;
    } else if (found && !next && entry.type === "update" && isConversation(entry.update)) {
      next = entry;
    }
  }
  // A running turn is forked as of its last commit point: what it streamed since is not there yet.
  if (!found) throw RpcError.invalidParams(`${FIELD}: no message ${messageId} in what session ${parent.id} has committed`);
  if (!next) return { endSeq: parent.lastSeq + 1, historyLength: parent.historyLength };
  if (typeof next.historyAt !== "number") {
    throw RpcError.invalidParams(
      `${FIELD}: message ${messageId} was recorded by an older version that kept no history position; fork the whole session instead`,
    );
  }
  const compactions = parent.compaction?.count ?? 0;
  if ((next.compactions ?? 0) !== compactions) {
    throw RpcError.invalidParams(
      `${FIELD}: message ${messageId} is older than the session's last compaction, whose summary also covers what followed it; fork a later message or the whole session`,
    );
  }
  return { endSeq: next.seq, historyLength: Math.min(next.historyAt, parent.historyLength) };
}

/**
 * Copies the parent's ledger records before `endSeq` to the fork, message ids included (a record
 * written before ids existed gets the id its replay shows); returns the last sequence number and
 * the tool calls the copy shows, with their last status.
 */
async function copyLedger(
  store: Store,
  parent: SessionRecord,
  forkId: string,
  endSeq: number,
): Promise<{ lastSeq: number; calls: Map<string, string | undefined> }> {
  const ids = new LedgerMessageIds(parent.id);
  const calls = new Map<string, string | undefined>();
  let lastSeq = 0;
  let ops: BatchOp[] = [];
  for await (const entry of ledger(store, parent.id, Math.min(parent.lastSeq, endSeq - 1))) {
    const update = entry.type === "update" ? entry.update : undefined;
    const messageId = ids.next(entry.seq, update);
    let value: LedgerEntry = entry;
    if (entry.type === "update" && messageId !== undefined && typeof (entry.update as { messageId?: unknown }).messageId !== "string") {
      value = { ...entry, update: { ...entry.update, messageId } as SessionUpdate };
    }
    if (update?.sessionUpdate === "tool_call" || update?.sessionUpdate === "tool_call_update") {
      calls.set(update.toolCallId, update.status ?? calls.get(update.toolCallId));
    }
    ops.push({ type: "put", key: keys.event(forkId, entry.seq), value });
    lastSeq = entry.seq;
    if (ops.length >= PAGE) {
      await store.batch(ops, false);
      ops = [];
    }
  }
  await store.batch(ops, false);
  return { lastSeq, calls };
}

/**
 * The history cut at a point inside a round may end with tool calls without results. Those the
 * fork's ledger does not show go (an assistant message left with nothing goes too); those it shows
 * get a result saying they did not finish. Returns the calls so closed.
 */
export function settleToolCalls(history: ChatMessage[], shown: ReadonlyMap<string, unknown>): { history: ChatMessage[]; closed: string[] } {
  const answered = new Set(history.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
  const out: ChatMessage[] = [];
  const closed: string[] = [];
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role !== "assistant" || !m.tool_calls?.length) {
      out.push(m);
      continue;
    }
    const kept = m.tool_calls.filter((c) => answered.has(c.id) || shown.has(c.id));
    const { tool_calls: _calls, reasoning_content: _reasoning, ...plain } = m;
    if (kept.length > 0) out.push({ ...m, tool_calls: kept });
    else if (m.content) out.push(plain);
    // Results follow their call's message; the missing ones go after those that are there.
    while (history[i + 1]?.role === "tool") out.push(history[++i]!);
    for (const call of kept) {
      if (answered.has(call.id)) continue;
      out.push({ role: "tool", tool_call_id: call.id, content: NOT_FINISHED });
      closed.push(call.id);
    }
  }
  return { history: out, closed };
}

/**
 * Writes the fork's ledger (unsynced; the fork's first commit makes it durable with its record)
 * and returns its conversation. `parent` is the parent's record as last committed.
 */
export async function forkConversation(store: Store, parent: SessionRecord, forkId: string, messageId: string | undefined): Promise<ForkedConversation> {
  const cut = messageId === undefined ? { endSeq: parent.lastSeq + 1, historyLength: parent.historyLength } : await cutAt(store, parent, messageId);
  const { lastSeq, calls } = await copyLedger(store, parent, forkId, cut.endSeq);
  const stored = (await store.range<ChatMessage>(keys.historyPrefix(parent.id), { limit: cut.historyLength })).map((e) => e.value);
  const { history, closed } = settleToolCalls(stored, calls);
  let seq = lastSeq;
  const at = new Date().toISOString();
  const compactions = parent.compaction?.count ?? 0;
  const ops: BatchOp[] = closed
    .filter((id) => calls.get(id) !== "completed" && calls.get(id) !== "failed")
    .map((toolCallId) => ({
      type: "put",
      key: keys.event(forkId, ++seq),
      value: {
        type: "update",
        update: {
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: "failed",
          content: [{ type: "content", content: { type: "text", text: NOT_FINISHED } }],
        },
        historyAt: history.length,
        ...(compactions > 0 ? { compactions } : {}),
        seq,
        at,
      },
    }));
  await store.batch(ops, false);
  return { lastSeq: seq, history, whole: messageId === undefined };
}

/** Where and for whom the fork runs: the forking window's folders and environment, as session/new takes them. */
export interface ForkPlace {
  cwd: string;
  additionalDirectories: string[];
  environment: Record<string, string>;
}

/**
 * The fork's record: the parent's settings (model, effort, mode, approval preset, pending mode
 * notes, compaction count), a title marking it a fork, its own place. Not taken: the goal (the
 * fork's next prompt in goal mode sets its own), usage and costs (the fork's own from now on).
 */
export function forkRecord(parent: SessionRecord, forked: ForkedConversation, id: string, place: ForkPlace): SessionRecord {
  const now = new Date().toISOString();
  return {
    id,
    cwd: place.cwd,
    additionalDirectories: place.additionalDirectories,
    ...(parent.title ? { title: `${parent.title} (fork)` } : {}),
    createdAt: now,
    updatedAt: now,
    model: parent.model,
    effort: parent.effort,
    mode: parent.mode,
    toolApproval: parent.toolApproval,
    status: "idle",
    lastSeq: forked.lastSeq,
    historyLength: forked.history.length,
    environment: place.environment,
    ...(parent.notes?.length ? { notes: [...parent.notes] } : {}),
    ...(parent.compaction ? { compaction: parent.compaction } : {}),
    ...(forked.whole && parent.context ? { context: parent.context } : {}),
    ...(parent.instructionFiles ? { instructionFiles: parent.instructionFiles } : {}),
  };
}

/** The fork keeps the parent's system prompt (and the provider's cached prefix) when it works in the same folders. */
export function sameFolders(parent: SessionRecord, place: ForkPlace): boolean {
  const a = parent.additionalDirectories;
  const b = place.additionalDirectories;
  return parent.cwd === place.cwd && a.length === b.length && a.every((d, i) => d === b[i]);
}
