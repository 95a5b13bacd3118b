import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../store/store.js";
import { CAPACITY, Inbox } from "./inbox.js";

async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rx-inbox-"));
  const store = await Store.open(join(dir, "db"));
  try {
    await fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test("items, order and receipts survive reopening; idempotency compares the text", async () => {
  await withStore(async (store) => {
    const inbox = await Inbox.open(store, "s1");
    const a = await inbox.enqueue({ text: "alpha", intent: "followup", source: "acp", idempotencyKey: "k1" });
    const b = await inbox.enqueue({ text: "beta", intent: "steer", source: "acp" });
    await inbox.move(b.item.id, 0);
    const reopened = await Inbox.open(store, "s1");
    assert.deepEqual(
      reopened.ordered().map((i) => i.text),
      ["beta", "alpha"],
    );
    assert.equal((await reopened.enqueue({ text: "alpha", intent: "followup", source: "acp", idempotencyKey: "k1" })).item.id, a.item.id);
    await assert.rejects(reopened.enqueue({ text: "changed", intent: "followup", source: "acp", idempotencyKey: "k1" }), /different text/);
    // A receipt outlives its item: the key still answers once the item has run.
    await reopened.remove(a.item.id);
    const again = await reopened.enqueue({ text: "alpha", intent: "followup", source: "acp", idempotencyKey: "k1" });
    assert.equal(again.idempotent, true);
    assert.equal(again.item.id, a.item.id);
  });
});

test("a new session's inbox, made without reading the store, is the one a reopening reads back", async () => {
  await withStore(async (store) => {
    const inbox = Inbox.empty(store, "s9");
    assert.deepEqual([inbox.depth(), inbox.paused], [0, false]);
    await inbox.enqueue({ text: "first", intent: "followup", source: "acp", idempotencyKey: "k" });
    const reopened = await Inbox.open(store, "s9");
    assert.deepEqual(
      reopened.ordered().map((i) => i.text),
      ["first"],
    );
    assert.equal((await reopened.enqueue({ text: "first", intent: "followup", source: "acp", idempotencyKey: "k" })).idempotent, true);
  });
});

test("recovery: admitted items become uncertain, pending work pauses the inbox until a client unpauses; retry requeues", async () => {
  await withStore(async (store) => {
    const inbox = await Inbox.open(store, "s2");
    const running = await inbox.enqueue({ text: "was running", intent: "followup", source: "acp" });
    await inbox.setState(running.item.id, "running");
    const steer = await inbox.enqueue({ text: "steer", intent: "steer", source: "acp", state: "steer_accepted" });
    await inbox.enqueue({ text: "waiting", intent: "followup", source: "acp" });
    const parked = await inbox.enqueue({ text: "parked prompt", intent: "followup", source: "prompt" });
    const next = await Inbox.open(store, "s2");
    await next.recover();
    assert.deepEqual(
      next.ordered().map((i) => i.state),
      ["uncertain", "uncertain", "queued", "queued"],
    );
    assert.equal(next.item(parked.item.id).source, "acp", "a parked prompt runs as a follow-up once unpaused");
    assert.match(next.item(steer.item.id).blockReason!, /unapplied steer/);
    const snap = next.snapshot() as { paused: boolean; recovered: boolean; recoveredCount: number };
    assert.deepEqual([snap.paused, snap.recovered, snap.recoveredCount], [true, true, 4]);
    assert.equal(next.nextQueued(), undefined, "nothing dispatches while paused");
    await next.retry(running.item.id);
    await next.setPaused(false);
    assert.equal(next.nextQueued()?.id, running.item.id);
    await assert.rejects(next.retry(running.item.id), /only uncertain or blocked/);
    const snapAfter = next.snapshot() as { recovered: boolean };
    assert.equal(snapAfter.recovered, false);
  });
});

test("capacity limits and pending-only edits answer with clear refusals", async () => {
  await withStore(async (store) => {
    const inbox = await Inbox.open(store, "s3");
    await assert.rejects(inbox.enqueue({ text: "x".repeat(CAPACITY.maxItemBytes + 1), intent: "followup", source: "acp" }), /too large/);
    const first = await inbox.enqueue({ text: "first", intent: "followup", source: "acp" });
    await inbox.setState(first.item.id, "running");
    await assert.rejects(inbox.update(first.item.id, "edit"), /only pending items/);
    await assert.rejects(inbox.delete(first.item.id), /only pending items/);
    for (let i = 1; i < CAPACITY.maxItems; i++) await inbox.enqueue({ text: `n${i}`, intent: "followup", source: "acp" });
    await assert.rejects(inbox.enqueue({ text: "overflow", intent: "followup", source: "acp" }), /inbox full/);
  });
});
