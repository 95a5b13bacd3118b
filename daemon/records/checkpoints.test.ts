import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../store/store.js";
import { localFiles } from "../tools/local-files.js";
import { Checkpoints, checkpointKeys, MAX_SAVED_BYTES } from "./checkpoints.js";

async function setup(t: { after(fn: () => Promise<void> | void): void }) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "rx-cp-")));
  const store = await Store.open(join(dir, "db"));
  const ws = join(dir, "ws");
  t.after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  mkdirSync(ws);
  return { store, ws, cp: new Checkpoints(store, "s1", ws, () => 0o022) };
}

/** What a tool's write does: the capture first, then the write, then its outcome. */
async function toolWrite(cp: Checkpoints, path: string, text: string): Promise<void> {
  const ticket = await cp.capture(path);
  writeFileSync(path, text);
  ticket.wrote(text);
}

test("one capture per file per turn; identical contents share one blob; undo then redo then undo", async (t) => {
  const { store, ws, cp } = await setup(t);
  const a = join(ws, "a.txt");
  const b = join(ws, "b.txt");
  writeFileSync(a, "same");
  writeFileSync(b, "same");
  await toolWrite(cp, a, "a1");
  await toolWrite(cp, a, "a2");
  await toolWrite(cp, b, "b1");
  assert.match(cp.seal()!, /\[checkpoint 1\] Saved the prior state of 2 files this turn changed \(a\.txt, b\.txt\)/);
  assert.equal(cp.seal(), undefined, "a turn that changed nothing has no checkpoint");
  assert.equal((await store.keysOf(checkpointKeys.blobPrefix("s1"))).length, 1, "both files held the same bytes: one blob");

  assert.match(await cp.undo(localFiles(0o022)), /Undid checkpoint 1/);
  assert.deepEqual([readFileSync(a, "utf8"), readFileSync(b, "utf8")], ["same", "same"]);
  assert.match(await cp.redo(localFiles(0o022)), /Redid checkpoint 1/);
  assert.deepEqual([readFileSync(a, "utf8"), readFileSync(b, "utf8")], ["a2", "b1"]);
  assert.equal(await cp.redo(localFiles(0o022)), "Nothing to redo.");
  await cp.undo(localFiles(0o022));
  assert.match(await cp.undo(localFiles(0o022)), /^Nothing to undo/);
});

test("a new change after an undo drops the redo; checkpoints outlive the object that made them", async (t) => {
  const { store, ws, cp } = await setup(t);
  const a = join(ws, "a.txt");
  await toolWrite(cp, a, "first");
  cp.seal();
  await cp.undo(localFiles(0o022));
  assert.equal(existsSync(a), false);
  await toolWrite(cp, join(ws, "other.txt"), "x");
  cp.seal();
  const again = new Checkpoints(store, "s1", ws, () => 0o022);
  assert.equal(await again.redo(localFiles(0o022)), "Nothing to redo.");
  assert.match(await again.list(), /- 1 — .* — a\.txt \(new\) — dropped\n- 2 — .* — other\.txt \(new\)$/);
});

test("a file over the size limit is not copied into the store; undo leaves it and says so, and restores the rest", async (t) => {
  const { store, ws, cp } = await setup(t);
  const big = join(ws, "big.log");
  const small = join(ws, "small.txt");
  writeFileSync(big, Buffer.alloc(MAX_SAVED_BYTES + 1, 0x61));
  writeFileSync(small, "before");
  await toolWrite(cp, big, "shrunk");
  await toolWrite(cp, small, "after");
  cp.seal();
  assert.equal((await store.keysOf(checkpointKeys.blobPrefix("s1"))).length, 1, "only the small file was saved");
  assert.match(await cp.list(), /big\.log \(too large to save\), small\.txt/);
  const answer = await cp.undo(localFiles(0o022));
  assert.match(answer, /Restored to their earlier content: small\.txt\n- Left as they are \(too large to have been saved\): big\.log \(16777217 bytes\)/);
  assert.equal(readFileSync(big, "utf8"), "shrunk");
  assert.equal(readFileSync(small, "utf8"), "before");
});

test("a file that grew past the size limit after the turn is left as it is by undo, not read into the store", async (t) => {
  const { store, ws, cp } = await setup(t);
  const log = join(ws, "grows.log");
  writeFileSync(log, "small");
  await toolWrite(cp, log, "still small");
  cp.seal();
  const blobs = (await store.keysOf(checkpointKeys.blobPrefix("s1"))).length;
  // Something else (a command, say) makes it huge; sparse, so only its size is large.
  truncateSync(log, MAX_SAVED_BYTES + 10);
  const answer = await cp.undo(localFiles(0o022));
  assert.match(answer, /Left as they are \(too large to have been saved\): grows\.log \(16777226 bytes\)/);
  assert.equal(statSync(log).size, MAX_SAVED_BYTES + 10, "not put back");
  assert.equal((await store.keysOf(checkpointKeys.blobPrefix("s1"))).length, blobs, "its new content was not saved for redo");
});

test("capturing a FIFO is refused at once instead of blocking on its read", async (t) => {
  const { ws, cp } = await setup(t);
  const fifo = join(ws, "pipe");
  execFileSync("mkfifo", [fifo]);
  await assert.rejects(cp.capture(fifo), /pipe is not a regular file/);
});

test("undo through a folder since swapped for a link to outside: neither removes nor writes a file there", {
  skip: process.platform === "linux" ? false : "folders are pinned on Linux only",
}, async (t) => {
  const { ws, cp } = await setup(t);
  const outside = `${ws}-outside`;
  mkdirSync(outside);
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  mkdirSync(join(ws, "sub"));
  const created = join(ws, "sub", "new.txt");
  const changed = join(ws, "sub", "old.bin");
  writeFileSync(changed, Buffer.from([0xff, 0x00, 0x01]));
  await toolWrite(cp, created, "new");
  cp.seal();
  await toolWrite(cp, changed, "changed");
  cp.seal();
  // The folder moves away and a link to outside takes its place, where files of the same names wait.
  renameSync(join(ws, "sub"), join(ws, "parked"));
  symlinkSync(outside, join(ws, "sub"));
  writeFileSync(join(outside, "new.txt"), "theirs");
  writeFileSync(join(outside, "old.bin"), "theirs");
  // They hold something else than the turns left: undo refuses; forced, the folder check still holds.
  assert.match(await cp.undo(localFiles(0o022)), /^\*\*Not undone\*\*: sub\/old\.bin changed since/);
  await assert.rejects(cp.undo(localFiles(0o022), true), /the folder of .*sub changed while writing/, "restoring old.bin");
  await assert.rejects(cp.undo(localFiles(0o022), true), /the folder of .*sub changed while writing/, "removing new.txt");
  assert.equal(readFileSync(join(outside, "new.txt"), "utf8"), "theirs");
  assert.equal(readFileSync(join(outside, "old.bin"), "utf8"), "theirs");
  assert.equal(readFileSync(join(ws, "parked", "old.bin"), "utf8"), "changed");
  assert.equal(readFileSync(join(ws, "parked", "new.txt"), "utf8"), "new");
});

test("a write that failed leaves no entry: not in the seal line, not listed, not restored; an empty checkpoint gives back the redo it dropped", async (t) => {
  const { store, ws, cp } = await setup(t);
  const a = join(ws, "a.txt");
  const refused = join(ws, "refused.txt");
  writeFileSync(a, "a0");
  await toolWrite(cp, a, "a1");
  cp.seal();
  await cp.undo(localFiles(0o022));
  // A turn whose only write is refused: no checkpoint at all, and checkpoint 1 can still be redone.
  writeFileSync(refused, "mine");
  (await cp.capture(refused)).failed();
  assert.equal(cp.seal(), undefined);
  assert.doesNotMatch(await cp.list(), /refused\.txt|^- 2/m);
  assert.match(await cp.redo(localFiles(0o022)), /Redid checkpoint 1/);
  assert.equal(readFileSync(a, "utf8"), "a1");

  // A failed write beside a good one: only the good one is in the checkpoint.
  const b = join(ws, "b.txt");
  await toolWrite(cp, b, "b1");
  (await cp.capture(refused)).failed();
  assert.match(cp.seal()!, /\[checkpoint 2\] Saved the prior state of 1 file this turn changed \(b\.txt\)/);
  writeFileSync(refused, "mine, edited later");
  assert.match(await cp.undo(localFiles(0o022)), /Undid checkpoint 2[\s\S]*Removed \(created by that turn\): b\.txt/);
  assert.equal(readFileSync(refused, "utf8"), "mine, edited later");
  const record = await store.get<{ files: Array<{ path: string }> }>(checkpointKeys.checkpoint("s1", 2));
  assert.deepEqual(
    record!.files.map((f) => f.path),
    [b],
  );
});

test("two writes of one file in a turn, the first failing: the second is what the entry and its digest stand for", async (t) => {
  const { ws, cp } = await setup(t);
  const a = join(ws, "a.txt");
  writeFileSync(a, "original");
  const first = await cp.capture(a);
  const second = await cp.capture(a);
  first.failed();
  writeFileSync(a, "second");
  second.wrote("second");
  assert.match(cp.seal()!, /\(a\.txt\)/);
  assert.match(await cp.undo(localFiles(0o022)), /Restored to their earlier content: a\.txt/);
  assert.equal(readFileSync(a, "utf8"), "original");
});

test("undo refuses, naming them, files changed since the turn and touches nothing; --force restores; redo likewise", async (t) => {
  const { ws, cp } = await setup(t);
  const a = join(ws, "a.txt");
  const b = join(ws, "b.txt");
  writeFileSync(a, "a0");
  writeFileSync(b, "b0");
  await toolWrite(cp, a, "a1");
  await toolWrite(cp, b, "b1");
  cp.seal();
  writeFileSync(b, "b1 and the user's line");
  const refusal = await cp.undo(localFiles(0o022));
  assert.match(refusal, /^\*\*Not undone\*\*: b\.txt changed since the turn of checkpoint 1 wrote it/);
  assert.doesNotMatch(refusal, /a\.txt/);
  assert.match(refusal, /`\/undo --force`/);
  assert.deepEqual([readFileSync(a, "utf8"), readFileSync(b, "utf8")], ["a1", "b1 and the user's line"], "all or nothing: a.txt not undone either");
  assert.match(await cp.undo(localFiles(0o022), true), /Undid checkpoint 1[\s\S]*Restored to their earlier content: a\.txt, b\.txt[\s\S]*Forced/);
  assert.deepEqual([readFileSync(a, "utf8"), readFileSync(b, "utf8")], ["a0", "b0"]);

  writeFileSync(a, "a0, edited after the undo");
  assert.match(await cp.redo(localFiles(0o022)), /^\*\*Not redone\*\*: a\.txt changed since checkpoint 1 was undone[\s\S]*`\/redo --force`/);
  assert.equal(readFileSync(b, "utf8"), "b0", "nothing re-applied");
  assert.match(await cp.redo(localFiles(0o022), true), /Redid checkpoint 1/);
  assert.deepEqual([readFileSync(a, "utf8"), readFileSync(b, "utf8")], ["a1", "b1 and the user's line"], "what each held at the undo");
});

test("records written before the digest existed are still read and undone as before", async (t) => {
  const { store, ws, cp } = await setup(t);
  const a = join(ws, "a.txt");
  const created = join(ws, "new.txt");
  writeFileSync(a, "edited since, by anyone");
  writeFileSync(created, "made by the old turn");
  const hash = createHash("sha256").update("old a").digest("hex");
  // The previous version's layout: no `left` on the entries.
  await store.batch(
    [
      { type: "put", key: checkpointKeys.blob("s1", hash), value: { data: Buffer.from("old a").toString("base64") } },
      {
        type: "put",
        key: checkpointKeys.checkpoint("s1", 1),
        value: {
          n: 1,
          at: "2024-01-01T00:00:00.000Z",
          state: "active",
          files: [
            { path: a, before: hash },
            { path: created, before: null, dirs: [] },
          ],
        },
      },
    ],
    true,
  );
  assert.match(await cp.list(), /- 1 — 2024-01-01T00:00:00\.000Z — a\.txt, new\.txt \(new\)$/);
  assert.match(await cp.undo(localFiles(0o022)), /Undid checkpoint 1/);
  assert.equal(readFileSync(a, "utf8"), "old a");
  assert.equal(existsSync(created), false);
  assert.match(await cp.redo(localFiles(0o022)), /Redid checkpoint 1/);
  assert.equal(readFileSync(a, "utf8"), "edited since, by anyone");
});

test("undo recreates a file removed since, and its folder, with the session's umask", async (t) => {
  const { store, ws } = await setup(t);
  const cp = new Checkpoints(store, "s1", ws, () => 0o027);
  const sub = join(ws, "sub");
  mkdirSync(sub);
  const text = join(sub, "a.txt");
  const binary = join(sub, "b.bin");
  writeFileSync(text, "before\n");
  writeFileSync(binary, Buffer.from([0, 1, 2]));
  await toolWrite(cp, text, "after\n");
  await toolWrite(cp, binary, "after");
  cp.seal();
  // A command removed them after the turn.
  rmSync(sub, { recursive: true });
  assert.match(await cp.undo(localFiles(0o027)), /Restored to their earlier content/);
  assert.equal(readFileSync(text, "utf8"), "before\n");
  assert.deepEqual(readFileSync(binary), Buffer.from([0, 1, 2]));
  assert.deepEqual(
    [sub, text, binary].map((p) => statSync(p).mode & 0o777),
    [0o750, 0o640, 0o640],
  );
});
