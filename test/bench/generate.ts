/**
 * Large stores for the benchmarks, written before the daemon starts through the store, the list
 * index and the ledger writer the daemon itself uses, so the daemon reads them as its own: stored
 * sessions by the thousand (`fillSessions`), and one session with a long ledger (`fillLedger`)
 * that session/load replays. Minutes of prompting become seconds of batched writes.
 */
import { randomUUID } from "node:crypto";
import { resolvePaths } from "../../shared/paths.js";
import { reindexOps } from "../../daemon/records/list-index.js";
import { SessionWriter } from "../../daemon/ledger/writer.js";
import { withMessageId } from "../../daemon/ledger/message-ids.js";
import type { ChatMessage } from "../../daemon/provider/types.js";
import { newSessionRecord, type LedgerBody, type LedgerEntry, type SessionRecord } from "../../daemon/sessions/types.js";
import { keys, Store, type BatchOp } from "../../daemon/store/store.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");

async function withStore<T>(home: string, f: (store: Store) => Promise<T>): Promise<T> {
  const store = await Store.open(resolvePaths({ ...process.env, REASONIX_HOME: home }).dbDir);
  try {
    const out = await f(store);
    // The index was built with the records: the daemon must not rebuild it at start.
    await store.batch([{ type: "put", key: "listindex!version", value: 1 }], true);
    return out;
  } finally {
    await store.close();
  }
}

function record(j: number, cwd: string, lastSeq: number, historyLength: number): SessionRecord {
  const at = new Date(T0 + j * 60_000).toISOString();
  return newSessionRecord({
    id: randomUUID(),
    cwd,
    additionalDirectories: [],
    title: `stored session ${j}`,
    createdAt: at,
    model: "deepseek-v4-flash",
    lastSeq,
    historyLength,
  });
}

/** One prompted turn as a session records it: its ledger bodies (`chunks` answer chunks) and its two history messages. */
function turn(n: number, chunks: number, historyAt: number): { ledger: LedgerBody[]; history: ChatMessage[] } {
  const turnId = `turn-${n}`;
  const prompt = `question ${n}`;
  const answer = Array.from({ length: chunks }, (_, i) => `word${i} `);
  const update = (body: Parameters<typeof withMessageId>[0], at: number): LedgerBody => ({ type: "update", update: withMessageId(body), historyAt: at });
  return {
    ledger: [
      { type: "turn_start", turnId },
      update({ sessionUpdate: "user_message_chunk", content: { type: "text", text: prompt } }, historyAt),
      ...answer.map((text) => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }, historyAt + 1)),
      { type: "turn_end", turnId, stopReason: "end_turn" },
    ],
    history: [
      { role: "user", content: prompt },
      { role: "assistant", content: answer.join("") },
    ],
  };
}

/**
 * `count` stored, titled sessions spread over `cwds`, each with `turns` short prompted turns in its
 * ledger and history (0: the record and its list entries only).
 */
export async function fillSessions(home: string, count: number, cwds: string[], turns = 1): Promise<string[]> {
  return withStore(home, async (store) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 500) {
      const ops: BatchOp[] = [];
      for (let j = i; j < Math.min(count, i + 500); j++) {
        const bodies: LedgerBody[] = [];
        const history: ChatMessage[] = [];
        for (let t = 0; t < turns; t++) {
          const one = turn(t, 8, history.length);
          bodies.push(...one.ledger);
          history.push(...one.history);
        }
        const r = record(j, cwds[j % cwds.length]!, bodies.length, history.length);
        const at = r.updatedAt;
        bodies.forEach((b, k) => ops.push({ type: "put", key: keys.event(r.id, k + 1), value: { ...b, seq: k + 1, at } satisfies LedgerEntry }));
        history.forEach((m, k) => ops.push({ type: "put", key: keys.history(r.id, k), value: m }));
        ops.push({ type: "put", key: keys.session(r.id), value: r }, ...reindexOps([], r).ops);
        ids.push(r.id);
      }
      await store.batch(ops, false);
    }
    return ids;
  });
}

/**
 * One stored session whose ledger holds `events` records: turns of a prompt and 96 answer chunks,
 * each chunk its own record (as chunks a write buffer did not join are), written through the
 * ledger writer in the daemon's format. Returns its id.
 */
export async function fillLedger(home: string, cwd: string, events: number): Promise<string> {
  return withStore(home, async (store) => {
    const writer = new SessionWriter(store, (err) => {
      throw err;
    });
    const history: ChatMessage[] = [];
    const r = record(0, cwd, 0, 0);
    let seq = 0;
    for (let t = 0; seq < events; t++) {
      const one = turn(t, Math.max(0, Math.min(96, events - seq - 3)), history.length);
      for (const body of one.ledger.slice(0, events - seq)) {
        seq++;
        writer.put(keys.event(r.id, seq), { ...body, seq, at: new Date(T0 + seq).toISOString() } satisfies LedgerEntry);
      }
      for (const m of one.history) {
        writer.put(keys.history(r.id, history.length), m);
        history.push(m);
      }
      if (t % 50 === 49) await writer.flush(false);
    }
    r.lastSeq = seq;
    r.historyLength = history.length;
    writer.put(keys.session(r.id), r);
    for (const op of reindexOps([], r).ops) if (op.type === "put") writer.put(op.key, op.value);
    await writer.flush(true);
    return r.id;
  });
}
