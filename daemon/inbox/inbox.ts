/**
 * The durable session inbox: follow-ups and steers, committed before they are acknowledged. Every
 * change is one atomic, synced batch (item + order + idempotency receipt), so a crash loses nothing
 * that was answered. After a restart an inbox holding pending work comes back paused and marked
 * recovered; items that had been admitted become `uncertain` and never re-run on their own.
 */
import { createHash, randomUUID } from "node:crypto";
import { RpcError } from "../../shared/jsonrpc.js";
import type { BatchOp, Store } from "../store/store.js";
import { keyspace } from "../store/keyspace.js";
import { StoreWriteError } from "../store/errors.js";

export type Intent = "followup" | "steer";
export type ItemState = "queued" | "steer_accepted" | "running" | "blocked" | "uncertain";
const PENDING: ReadonlySet<ItemState> = new Set(["queued", "blocked", "uncertain"]);

export interface InboxItem {
  id: string;
  sessionId: string;
  intent: Intent;
  state: ItemState;
  text: string;
  preview: string;
  byteSize: number;
  checksum: string;
  createdAt: string;
  updatedAt: string;
  revision: number;
  /** "acp": enqueued or steered by a client; "prompt": a session/prompt waiting for a running turn. */
  source: "acp" | "prompt";
  idempotencyKey?: string;
  blockReason?: string;
}

interface InboxHead {
  revision: number;
  paused: boolean;
  recovered: boolean;
  recoveredCount: number;
  order: string[];
}

export const CAPACITY = { maxItems: 64, maxItemBytes: 4 * 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 };

export const inboxKeys = {
  head: (sid: string) => keyspace.inboxHead.key(sid),
  headPrefix: keyspace.inboxHead.range(),
  item: (sid: string, id: string) => keyspace.inboxItem.key(sid, id),
  itemPrefix: (sid: string) => keyspace.inboxItem.range(sid),
  idem: (sid: string, key: string) => keyspace.idempotency.key(sid, key),
  idemPrefix: (sid: string) => keyspace.idempotency.range(sid),
};

const refuse = (message: string): RpcError => RpcError.of("InboxRefused", message);
const sha = (text: string): string => createHash("sha256").update(text).digest("hex");
const preview = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
};

export class Inbox {
  private constructor(
    private readonly store: Store,
    readonly sessionId: string,
    private head: InboxHead,
    private readonly items: Map<string, InboxItem>,
  ) {}

  /** The inbox of a session being created under a new id: nothing can be stored under it yet, so nothing is read. */
  static empty(store: Store, sessionId: string): Inbox {
    return new Inbox(store, sessionId, { revision: 0, paused: false, recovered: false, recoveredCount: 0, order: [] }, new Map());
  }

  static async open(store: Store, sessionId: string): Promise<Inbox> {
    const head = (await store.get<InboxHead>(inboxKeys.head(sessionId))) ?? { revision: 0, paused: false, recovered: false, recoveredCount: 0, order: [] };
    const items = new Map<string, InboxItem>();
    for (const { value } of await store.range<InboxItem>(inboxKeys.itemPrefix(sessionId))) items.set(value.id, value);
    head.order = head.order.filter((id) => items.has(id));
    return new Inbox(store, sessionId, head, items);
  }

  get paused(): boolean {
    return this.head.paused;
  }

  /** Pending work: what a client may still edit, move, retry or delete. */
  depth(): number {
    return this.ordered().filter((i) => PENDING.has(i.state)).length;
  }

  ordered(): InboxItem[] {
    return this.head.order.map((id) => this.items.get(id)!).filter(Boolean);
  }

  item(id: string): InboxItem {
    const item = this.items.get(id);
    if (!item) throw refuse(`inbox item ${id} not found in session ${this.sessionId}`);
    return item;
  }

  /** Metadata only: previews and byte counts, never bodies. */
  snapshot(): object {
    const items = this.ordered();
    return {
      schemaVersion: 1,
      sessionId: this.sessionId,
      revision: this.head.revision,
      paused: this.head.paused,
      recovered: this.head.recovered,
      recoveredCount: this.head.recoveredCount,
      items: items.map((i) => this.meta(i)),
      capacity: { ...CAPACITY, items: items.length, totalBytes: items.reduce((n, i) => n + i.byteSize, 0) },
    };
  }

  meta(i: InboxItem): object {
    return {
      itemId: i.id,
      intent: i.intent,
      state: i.state,
      source: i.source,
      preview: i.preview,
      byteSize: i.byteSize,
      revision: i.revision,
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
      ...(i.idempotencyKey ? { idempotencyKey: i.idempotencyKey } : {}),
      ...(i.blockReason ? { blockReason: i.blockReason } : {}),
    };
  }

  position(id: string): number {
    return this.head.order.indexOf(id);
  }

  async enqueue(input: {
    text: string;
    intent: Intent;
    source: InboxItem["source"];
    idempotencyKey?: string;
    state?: ItemState;
  }): Promise<{ item: InboxItem; idempotent: boolean }> {
    const fingerprint = sha(`${input.intent}\0${input.text}`);
    if (input.idempotencyKey) {
      const receipt = await this.store.get<{ itemId: string; fingerprint: string }>(inboxKeys.idem(this.sessionId, input.idempotencyKey));
      if (receipt) {
        if (receipt.fingerprint !== fingerprint) {
          throw refuse(`idempotencyKey "${input.idempotencyKey}" was already used with a different text; use a new key`);
        }
        const original = this.items.get(receipt.itemId);
        // The original may already have run: its receipt still answers, with what is left of it.
        return { item: original ?? this.ghost(receipt.itemId, input), idempotent: true };
      }
    }
    const byteSize = Buffer.byteLength(input.text);
    if (byteSize > CAPACITY.maxItemBytes) throw refuse(`inbox item too large: ${byteSize} bytes exceeds the ${CAPACITY.maxItemBytes}-byte limit per item`);
    const all = this.ordered();
    if (all.length >= CAPACITY.maxItems) throw refuse(`inbox full: it holds ${all.length} items, the most it takes is ${CAPACITY.maxItems}`);
    const total = all.reduce((n, i) => n + i.byteSize, 0);
    if (total + byteSize > CAPACITY.maxTotalBytes) throw refuse(`inbox full: ${total + byteSize} bytes would exceed the ${CAPACITY.maxTotalBytes}-byte total`);
    const now = new Date().toISOString();
    const item: InboxItem = {
      id: `item_${randomUUID()}`,
      sessionId: this.sessionId,
      intent: input.intent,
      state: input.state ?? "queued",
      text: input.text,
      preview: preview(input.text),
      byteSize,
      checksum: fingerprint,
      createdAt: now,
      updatedAt: now,
      revision: 1,
      source: input.source,
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
    };
    this.items.set(item.id, item);
    this.head.order.push(item.id);
    const ops: BatchOp[] = [{ type: "put", key: inboxKeys.item(this.sessionId, item.id), value: item }];
    if (input.idempotencyKey)
      ops.push({ type: "put", key: inboxKeys.idem(this.sessionId, input.idempotencyKey), value: { itemId: item.id, fingerprint, createdAt: now } });
    await this.commit(ops);
    return { item, idempotent: false };
  }

  private ghost(id: string, input: { text: string; intent: Intent; source: InboxItem["source"] }): InboxItem {
    const now = new Date().toISOString();
    return {
      id,
      sessionId: this.sessionId,
      intent: input.intent,
      state: "running",
      text: input.text,
      preview: preview(input.text),
      byteSize: Buffer.byteLength(input.text),
      checksum: "",
      createdAt: now,
      updatedAt: now,
      revision: 0,
      source: input.source,
    };
  }

  private pending(id: string): InboxItem {
    const item = this.item(id);
    if (!PENDING.has(item.state)) throw refuse(`inbox item ${id} is ${item.state}; only pending items (queued, blocked, uncertain) can change`);
    return item;
  }

  async update(id: string, text: string): Promise<InboxItem> {
    const item = this.pending(id);
    if (text.trim().length === 0) throw refuse("text must not be empty");
    const byteSize = Buffer.byteLength(text);
    if (byteSize > CAPACITY.maxItemBytes) throw refuse(`inbox item too large: ${byteSize} bytes exceeds the ${CAPACITY.maxItemBytes}-byte limit per item`);
    Object.assign(item, {
      text,
      preview: preview(text),
      byteSize,
      checksum: sha(`${item.intent}\0${text}`),
      updatedAt: new Date().toISOString(),
      revision: item.revision + 1,
    });
    await this.commit([{ type: "put", key: inboxKeys.item(this.sessionId, id), value: item }]);
    return item;
  }

  async delete(id: string): Promise<void> {
    this.pending(id);
    await this.remove(id);
  }

  /** Removes an item whatever its state (it ran, or its steer was applied). */
  async remove(id: string): Promise<void> {
    if (!this.items.delete(id)) return;
    this.head.order = this.head.order.filter((x) => x !== id);
    await this.commit([{ type: "del", key: inboxKeys.item(this.sessionId, id) }]);
  }

  async move(id: string, toIndex: number): Promise<void> {
    this.pending(id);
    const order = this.head.order.filter((x) => x !== id);
    const at = Math.max(0, Math.min(order.length, Math.trunc(toIndex)));
    order.splice(at, 0, id);
    this.head.order = order;
    await this.commit([]);
  }

  async setPaused(paused: boolean): Promise<void> {
    this.head.paused = paused;
    if (!paused) {
      this.head.recovered = false;
      this.head.recoveredCount = 0;
    }
    await this.commit([]);
  }

  async retry(id: string): Promise<void> {
    const item = this.item(id);
    if (item.state !== "uncertain" && item.state !== "blocked")
      throw refuse(`inbox item ${id} is ${item.state}; only uncertain or blocked items can be retried`);
    await this.setState(id, "queued");
  }

  async setState(id: string, state: ItemState, blockReason?: string): Promise<void> {
    const item = this.item(id);
    item.state = state;
    item.updatedAt = new Date().toISOString();
    if (blockReason) item.blockReason = blockReason;
    else delete item.blockReason;
    await this.commit([{ type: "put", key: inboxKeys.item(this.sessionId, id), value: item }]);
  }

  /** The next follow-up to dispatch: queued, not owned by a waiting session/prompt. */
  nextQueued(): InboxItem | undefined {
    if (this.head.paused) return undefined;
    return this.ordered().find((i) => i.state === "queued" && i.source === "acp");
  }

  accepted(): InboxItem[] {
    return this.ordered().filter((i) => i.state === "steer_accepted");
  }

  /** A new daemon found this inbox: admitted items are uncertain; pending work waits for a client. */
  async recover(): Promise<void> {
    const ops: BatchOp[] = [];
    for (const item of this.ordered()) {
      // A prompt that was waiting for a turn lost its caller with the old daemon: it is a follow-up now.
      if (item.source === "prompt") {
        item.source = "acp";
        ops.push({ type: "put", key: inboxKeys.item(this.sessionId, item.id), value: item });
      }
      if (item.state === "running" || item.state === "steer_accepted") {
        item.state = "uncertain";
        item.blockReason =
          item.intent === "steer"
            ? "unapplied steer: the daemon stopped before the turn took it"
            : "the daemon stopped while this item was running; it may or may not have run";
        item.updatedAt = new Date().toISOString();
        ops.push({ type: "put", key: inboxKeys.item(this.sessionId, item.id), value: item });
      }
    }
    const pending = this.depth();
    if (pending > 0) {
      this.head.paused = true;
      this.head.recovered = true;
      this.head.recoveredCount = pending;
    }
    if (ops.length > 0 || pending > 0) await this.commit(ops);
  }

  private async commit(ops: BatchOp[]): Promise<void> {
    this.head.revision++;
    try {
      await this.store.batch([...ops, { type: "put", key: inboxKeys.head(this.sessionId), value: this.head }], true);
    } catch (err) {
      // The change was applied in memory first: put memory back to what the store holds.
      await this.reload().catch(() => undefined);
      throw err instanceof StoreWriteError ? RpcError.internal(`The inbox could not be saved: ${err.message}`) : err;
    }
  }

  private async reload(): Promise<void> {
    const fresh = await Inbox.open(this.store, this.sessionId);
    this.head = fresh.head;
    this.items.clear();
    for (const [id, item] of fresh.items) this.items.set(id, item);
  }
}
