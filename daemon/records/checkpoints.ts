/**
 * Checkpoints: before a turn first changes a file, the file's prior bytes (or its absence) are saved
 * in the store, content-addressed per session (`blob!<id>!<sha256>`), and listed in that turn's
 * checkpoint (`checkpoint!<id>!<n>`), synced before the change is made (a crash between the two
 * still leaves it undoable). A write that then fails takes its entry back out, since it changed
 * nothing; one that succeeds records a digest of the text it left. `/undo` puts back the files of
 * the newest checkpoint not yet undone, first saving what they hold now so `/redo` can re-apply it;
 * it refuses, naming them, while any of them holds something else than the turn left (the user's
 * edits since), unless forced, and `/redo` likewise when a file changed since the undo. A new
 * checkpoint drops what could still be redone. Only changes made through the file tools are seen:
 * what a shell command changes is not. Restoring writes and removes through the file's verified
 * folder (tools/pinned-folder.ts), as the tools' writes do: a folder swapped for a link since cannot
 * aim it outside. It asks nothing, protected paths included: the user ordered it.
 */
import type { Store } from "../store/store.js";
import { keyspace } from "../store/keyspace.js";
import { decodeBytes, looksBinary, writeAtomic } from "../tools/local-files.js";
import { rmdirPinned, unlinkPinned } from "../tools/pinned-folder.js";
import type { FileAccess } from "../tools/types.js";
import { displayPath } from "../tools/workspace.js";
import { bytesOf, type Held, hashOf, holding, holds, MAX_SAVED_BYTES, missingDirs, stillLeft, textDigest } from "./checkpoint-files.js";

export { MAX_SAVED_BYTES } from "./checkpoint-files.js";

export const checkpointKeys = {
  checkpoint: (id: string, n: number) => keyspace.checkpoint.key(id, n),
  checkpointPrefix: (id: string) => keyspace.checkpoint.range(id),
  blob: (id: string, hash: string) => keyspace.blob.key(id, hash),
  blobPrefix: (id: string) => keyspace.blob.range(id),
};

interface FileEntry {
  path: string;
  /** The blob of the file before the turn changed it; null when it did not exist. */
  before: string | null;
  /** What it held when it was undone (null: gone), for redo. */
  after?: string | null;
  /** Folders the turn had to create for a new file, outermost first: undo removes them when empty. */
  dirs?: string[];
  /** Over MAX_SAVED_BYTES: not saved, and undo leaves it as it is (saying so). */
  tooLarge?: number;
  /**
   * textDigest of what the turn's last successful write to it left: undo refuses while the file holds
   * anything else. Absent in records made before it existed, and when the daemon stopped between the
   * capture and the write: those are restored without the check, as they always were.
   */
  left?: string;
}

interface CheckpointRecord {
  n: number;
  at: string;
  files: FileEntry[];
  /** active: its changes stand; undone: restored, may be redone; dropped: undone and past redo. */
  state: "active" | "undone" | "dropped";
}

/** What became of the write a capture was made for. */
export interface WriteTicket {
  /** It succeeded, leaving `text`. */
  wrote(text: string): void;
  /** It failed, so changed nothing: unless another write of the turn to the file succeeded, the entry goes. */
  failed(): void;
}

type Op = { type: "put"; key: string; value: unknown } | { type: "del"; key: string };

export class Checkpoints {
  private open: CheckpointRecord | undefined;
  /** Captures and record updates run one at a time, in order; a capture is synced before its write. */
  private chain: Promise<void> = Promise.resolve();
  /** Per entry of the open checkpoint: writes under way, and whether one succeeded. */
  private readonly writes = new WeakMap<FileEntry, { inFlight: number; ok: boolean }>();
  /** The checkpoints that opening one dropped: undoable again if it ends with no files. */
  private readonly droppedBy = new WeakMap<CheckpointRecord, CheckpointRecord[]>();

  constructor(
    private readonly store: Store,
    private readonly sessionId: string,
    private readonly cwd: string,
    /** The session's umask: a file restored where none is now is created as the tools create one. */
    private readonly umask: () => number,
  ) {}

  /**
   * Called before a tool writes `path`: the first time in this turn, its prior bytes are saved. A
   * text file open in the editor is saved as its buffer holds it (`read` goes through the editor),
   * since that is what the turn changed and what undo writes back to. The ticket is told the outcome.
   */
  async capture(path: string, read?: () => Promise<{ text: string; encoding: string }>): Promise<WriteTicket> {
    const next = this.chain.then(() => this.captureNow(path, read));
    this.chain = next.then(
      () => undefined,
      () => undefined,
    );
    const { cp, entry } = await next;
    return this.ticket(cp, entry);
  }

  /** The turn is over: its checkpoint is closed; returns the line to show, if it changed files. */
  seal(): string | undefined {
    const cp = this.open;
    this.open = undefined;
    if (!cp || cp.files.length === 0) return undefined;
    const names = cp.files.map((f) => this.show(f.path));
    return `\n\n[checkpoint ${cp.n}] Saved the prior state of ${names.length} file${names.length === 1 ? "" : "s"} this turn changed (${names.join(", ")}); \`/undo\` restores ${names.length === 1 ? "it" : "them"}.`;
  }

  /**
   * Puts back the newest active checkpoint's files, all or none: while any of them holds something
   * else than its turn left, nothing is touched and the answer names them, unless `force`.
   */
  async undo(files: FileAccess, force = false): Promise<string> {
    await this.chain;
    const all = await this.all();
    const target = all.filter((c) => c.state === "active").at(-1);
    if (!target) return "Nothing to undo: no turn's file changes are left to restore.";
    const now = new Map<FileEntry, Held>();
    for (const f of target.files) if (f.tooLarge === undefined) now.set(f, await holding(files, f.path));
    // One grown too large since is left as it is anyway, and one gone since comes back: neither
    // restore loses anything of the user's.
    const changed = target.files.filter((f) => {
      const held = now.get(f);
      return f.left !== undefined && held !== undefined && held !== null && !("tooLarge" in held) && !stillLeft(held, f.left);
    });
    if (changed.length && !force) {
      const names = changed.map((f) => this.show(f.path)).join(", ");
      return [
        `**Not undone**: ${names} changed since the turn of checkpoint ${target.n} wrote ${changed.length === 1 ? "it" : "them"}; restoring would lose those changes.`,
        `Nothing was touched (a checkpoint is undone whole). \`/undo --force\` restores checkpoint ${target.n} anyway.`,
      ].join("\n");
    }
    if (this.open?.n === target.n) this.open = undefined;
    const removed: string[] = [];
    const restored: string[] = [];
    const same: string[] = [];
    const ops: Op[] = [];
    const kept: string[] = [];
    for (const f of [...target.files].reverse()) {
      const held = now.get(f);
      if (held === undefined) continue;
      if (held && !("bytes" in held)) {
        // Grown past what is saved since the turn: left as it is, as one that was too large then.
        f.tooLarge = held.tooLarge;
        continue;
      }
      if (held) {
        f.after = hashOf(held.bytes);
        ops.push({ type: "put", key: checkpointKeys.blob(this.sessionId, f.after), value: { data: held.bytes.toString("base64") } });
      } else f.after = null;
    }
    target.state = "undone";
    // What redo needs is durable before anything is put back.
    await this.store.batch([...ops, { type: "put", key: checkpointKeys.checkpoint(this.sessionId, target.n), value: target }], true);
    for (const f of [...target.files].reverse()) {
      if (f.tooLarge !== undefined) {
        kept.unshift(`${this.show(f.path)} (${f.tooLarge} bytes)`);
        continue;
      }
      const before = f.before === null ? null : await this.blob(f.before);
      if (holds(now.get(f)!, before)) {
        // Already as the undo would leave it (a write the daemon stopped before): not touched.
        same.unshift(this.show(f.path));
        if (before === null) for (const dir of [...(f.dirs ?? [])].reverse()) await rmdirPinned(dir).catch(() => undefined);
      } else if (before === null) {
        await unlinkPinned(f.path).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
        for (const dir of [...(f.dirs ?? [])].reverse()) await rmdirPinned(dir).catch(() => undefined);
        removed.unshift(this.show(f.path));
      } else {
        await this.put(files, f.path, before);
        restored.unshift(this.show(f.path));
      }
    }
    return [
      `**Undid checkpoint ${target.n}** (${target.at}), without asking the model.`,
      ...(removed.length ? [`- Removed (created by that turn): ${removed.join(", ")}`] : []),
      ...(restored.length ? [`- Restored to their earlier content: ${restored.join(", ")}`] : []),
      ...(same.length ? [`- Already as they were before that turn: ${same.join(", ")}`] : []),
      ...(kept.length ? [`- Left as they are (too large to have been saved): ${kept.join(", ")}`] : []),
      ...(changed.length ? [`- Forced: the changes made since the turn to ${changed.map((f) => this.show(f.path)).join(", ")} are saved for \`/redo\`.`] : []),
      "`/redo` re-applies it.",
    ].join("\n");
  }

  /** Re-applies the last undo, all or none: refused while a file changed since the undo, unless `force`. */
  async redo(files: FileAccess, force = false): Promise<string> {
    await this.chain;
    const all = (await this.all()).filter((c) => c.state !== "dropped");
    let i = all.length;
    while (i > 0 && all[i - 1]!.state === "undone") i--;
    const target = all[i];
    if (!target) return "Nothing to redo.";
    const plan: Array<{ f: FileEntry; held: Held; after: Buffer | null }> = [];
    const changed: string[] = [];
    for (const f of target.files) {
      if (f.tooLarge !== undefined) continue;
      const held = await holding(files, f.path);
      if (!holds(held, f.before === null ? null : await this.blob(f.before))) changed.push(this.show(f.path));
      plan.push({ f, held, after: f.after === null || f.after === undefined ? null : await this.blob(f.after) });
    }
    if (changed.length && !force) {
      return [
        `**Not redone**: ${changed.join(", ")} changed since checkpoint ${target.n} was undone; re-applying it would lose those changes.`,
        `Nothing was touched. \`/redo --force\` re-applies checkpoint ${target.n} anyway.`,
      ].join("\n");
    }
    for (const { f, held, after } of plan) {
      if (holds(held, after)) continue;
      if (after === null) await unlinkPinned(f.path).catch(() => undefined);
      else await this.put(files, f.path, after);
    }
    target.state = "active";
    await this.store.batch([{ type: "put", key: checkpointKeys.checkpoint(this.sessionId, target.n), value: target }], true);
    return `**Redid checkpoint ${target.n}**: ${target.files.map((f) => this.show(f.path)).join(", ")} back as that turn left them.`;
  }

  async list(): Promise<string> {
    await this.chain;
    const all = await this.all();
    if (all.length === 0) return "No checkpoints yet: they are saved when a turn first changes a file.";
    return [
      "**Checkpoints** (newest last)",
      ...all.map(
        (c) =>
          `- ${c.n} — ${c.at} — ${c.files.map((f) => `${this.show(f.path)}${f.tooLarge !== undefined ? " (too large to save)" : f.before === null ? " (new)" : ""}`).join(", ")}${c.state === "active" ? "" : ` — ${c.state}`}`,
      ),
    ].join("\n");
  }

  private async captureNow(path: string, read?: () => Promise<{ text: string; encoding: string }>): Promise<{ cp: CheckpointRecord; entry: FileEntry }> {
    const known = this.open?.files.find((f) => f.path === path);
    if (this.open && known) {
      this.writes.get(known)!.inFlight++;
      return { cp: this.open, entry: known };
    }
    const ops: Op[] = [];
    if (!this.open) {
      const all = await this.all();
      // A new change: what was undone before it can no longer be redone.
      const dropped = all.filter((c) => c.state === "undone");
      for (const c of dropped) {
        c.state = "dropped";
        ops.push({ type: "put", key: checkpointKeys.checkpoint(this.sessionId, c.n), value: c });
      }
      this.open = { n: (all.at(-1)?.n ?? 0) + 1, at: new Date().toISOString(), files: [], state: "active" };
      this.droppedBy.set(this.open, dropped);
    }
    const cp = this.open;
    const found = await bytesOf(path);
    let bytes = Buffer.isBuffer(found) ? found : null;
    if (bytes && read && !looksBinary(bytes) && decodeBytes(bytes).encoding === "utf8") {
      const seen = await read().catch(() => undefined);
      if (seen?.encoding === "utf8") bytes = Buffer.from(seen.text, "utf8");
    }
    const tooLarge = found && !Buffer.isBuffer(found) ? found.tooLarge : bytes && bytes.length > MAX_SAVED_BYTES ? bytes.length : undefined;
    let entry: FileEntry;
    if (tooLarge !== undefined) entry = { path, before: null, tooLarge };
    else {
      let before: string | null = null;
      if (bytes) {
        before = hashOf(bytes);
        ops.push({ type: "put", key: checkpointKeys.blob(this.sessionId, before), value: { data: bytes.toString("base64") } });
      }
      entry = { path, before, ...(bytes ? {} : { dirs: await missingDirs(path) }) };
    }
    cp.files.push(entry);
    this.writes.set(entry, { inFlight: 1, ok: false });
    ops.push({ type: "put", key: checkpointKeys.checkpoint(this.sessionId, cp.n), value: cp });
    await this.store.batch(ops, true);
    return { cp, entry };
  }

  private ticket(cp: CheckpointRecord, entry: FileEntry): WriteTicket {
    const writes = this.writes.get(entry)!;
    let settled = false;
    const settle = (text: string | undefined): void => {
      if (settled) return;
      settled = true;
      writes.inFlight--;
      if (text !== undefined) {
        writes.ok = true;
        entry.left = textDigest(text);
        // Not synced: lost in a crash, the entry is restored unchecked, as before this field.
        this.persist(() => [{ type: "put", key: checkpointKeys.checkpoint(this.sessionId, cp.n), value: cp }], false);
      } else if (!writes.ok && writes.inFlight === 0) {
        cp.files.splice(cp.files.indexOf(entry), 1);
        this.persist(() => this.withdrawn(cp), true);
      }
    };
    return { wrote: (text) => settle(text), failed: () => settle(undefined) };
  }

  /** The record after an entry left it; with no file left, gone, and the redo it dropped given back. */
  private withdrawn(cp: CheckpointRecord): Op[] {
    const key = checkpointKeys.checkpoint(this.sessionId, cp.n);
    if (cp.files.length > 0) return [{ type: "put", key, value: cp }];
    if (this.open === cp) this.open = undefined;
    const dropped = this.droppedBy.get(cp) ?? [];
    for (const c of dropped) c.state = "undone";
    return [{ type: "del", key }, ...dropped.map((c) => ({ type: "put" as const, key: checkpointKeys.checkpoint(this.sessionId, c.n), value: c }))];
  }

  private persist(ops: () => Op[], sync: boolean): void {
    this.chain = this.chain.then(() => this.store.batch(ops(), sync)).catch(() => undefined);
  }

  /** Exact bytes back: UTF-8 text through the editor's buffer when it offers one, anything else on disk. */
  private async put(files: FileAccess, path: string, bytes: Buffer): Promise<void> {
    const decoded = looksBinary(bytes) ? undefined : decodeBytes(bytes);
    if (decoded?.encoding === "utf8") await files.write(path, decoded.text, "utf8");
    else await writeAtomic(path, bytes, { umask: this.umask(), create: true });
  }

  private async blob(hash: string): Promise<Buffer> {
    const value = await this.store.get<{ data: string }>(checkpointKeys.blob(this.sessionId, hash));
    if (!value) throw new Error(`the saved content ${hash.slice(0, 12)} is missing from the store`);
    return Buffer.from(value.data, "base64");
  }

  private async all(): Promise<CheckpointRecord[]> {
    return (await this.store.range<CheckpointRecord>(checkpointKeys.checkpointPrefix(this.sessionId))).map((e) => e.value);
  }

  private show(path: string): string {
    return displayPath(this.cwd, path);
  }
}
