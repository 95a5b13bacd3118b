/**
 * Checkpoints: before a turn first changes a file, the file's prior bytes (or its absence) are saved
 * in the store, content-addressed per session (`blob!<id>!<sha256>`), and listed in that turn's
 * checkpoint (`checkpoint!<id>!<n>`), synced before the change is made. `/undo` puts back the files
 * of the newest checkpoint not yet undone, first saving what they hold now so `/redo` can re-apply
 * it; a new checkpoint drops what could still be redone. Only changes made through the file tools
 * are seen: what a shell command changes is not. Restoring writes and removes through the file's
 * verified folder (tools/pinned-folder.ts), as the tools' writes do: a folder swapped for a link
 * since cannot aim it outside. It asks nothing, protected paths included: the user ordered it.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { Store } from "../store/store.js";
import { decodeBytes, looksBinary, NotRegularFileError, writeAtomic } from "../tools/local-files.js";
import { rmdirPinned, unlinkPinned } from "../tools/pinned-folder.js";
import type { FileAccess } from "../tools/types.js";
import { displayPath } from "../tools/workspace.js";

export const checkpointKeys = {
  checkpoint: (id: string, n: number) => `checkpoint!${id}!${String(n).padStart(12, "0")}`,
  checkpointPrefix: (id: string) => `checkpoint!${id}!`,
  blob: (id: string, hash: string) => `blob!${id}!${hash}`,
  blobPrefix: (id: string) => `blob!${id}!`,
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
}

/** A file larger than this is not copied into the store; undo names it instead of restoring it. */
export const MAX_SAVED_BYTES = 16 * 1024 * 1024;

interface CheckpointRecord {
  n: number;
  at: string;
  files: FileEntry[];
  /** active: its changes stand; undone: restored, may be redone; dropped: undone and past redo. */
  state: "active" | "undone" | "dropped";
}

const hashOf = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/**
 * The file's bytes; only its size when that is over MAX_SAVED_BYTES (it is not saved, so not read);
 * null when absent. Anything but a regular file is refused.
 */
async function bytesOf(path: string): Promise<Buffer | { tooLarge: number } | null> {
  try {
    const st = await stat(path);
    // A FIFO would block the read until a writer came; a tool does not replace one anyway.
    if (!st.isFile()) throw new NotRegularFileError(path);
    if (st.size > MAX_SAVED_BYTES) return { tooLarge: st.size };
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** The folders above `path` that do not exist yet, outermost first. */
async function missingDirs(path: string): Promise<string[]> {
  const out: string[] = [];
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      await stat(dir);
      break;
    } catch {
      out.unshift(dir);
    }
  }
  return out;
}

export class Checkpoints {
  private open: CheckpointRecord | undefined;
  /** Captures run one at a time, each synced before its write goes ahead. */
  private chain: Promise<void> = Promise.resolve();

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
   * since that is what the turn changed and what undo writes back to.
   */
  capture(path: string, read?: () => Promise<{ text: string; encoding: string }>): Promise<void> {
    const next = this.chain.then(() => this.captureNow(path, read));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The turn is over: its checkpoint is closed; returns the line to show, if it changed files. */
  seal(): string | undefined {
    const cp = this.open;
    this.open = undefined;
    if (!cp) return undefined;
    const names = cp.files.map((f) => this.show(f.path));
    return `\n\n[checkpoint ${cp.n}] Saved the prior state of ${names.length} file${names.length === 1 ? "" : "s"} this turn changed (${names.join(", ")}); \`/undo\` restores ${names.length === 1 ? "it" : "them"}.`;
  }

  async undo(files: FileAccess): Promise<string> {
    await this.chain;
    const all = await this.all();
    const target = all.filter((c) => c.state === "active").at(-1);
    if (!target) return "Nothing to undo: no turn's file changes are left to restore.";
    if (this.open?.n === target.n) this.open = undefined;
    const removed: string[] = [];
    const restored: string[] = [];
    const ops: Array<{ type: "put"; key: string; value: unknown }> = [];
    const kept: string[] = [];
    for (const f of [...target.files].reverse()) {
      if (f.tooLarge !== undefined) continue;
      const now = await bytesOf(f.path);
      if (now && !Buffer.isBuffer(now)) {
        // Grown past what is saved since the turn: left as it is, as one that was too large then.
        f.tooLarge = now.tooLarge;
        continue;
      }
      if (now) {
        f.after = hashOf(now);
        ops.push({ type: "put", key: checkpointKeys.blob(this.sessionId, f.after), value: { data: now.toString("base64") } });
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
      if (f.before === null) {
        await unlinkPinned(f.path).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
        for (const dir of [...(f.dirs ?? [])].reverse()) await rmdirPinned(dir).catch(() => undefined);
        removed.unshift(this.show(f.path));
      } else {
        await this.put(files, f.path, await this.blob(f.before));
        restored.unshift(this.show(f.path));
      }
    }
    return [
      `**Undid checkpoint ${target.n}** (${target.at}), without asking the model.`,
      ...(removed.length ? [`- Removed (created by that turn): ${removed.join(", ")}`] : []),
      ...(restored.length ? [`- Restored to their earlier content: ${restored.join(", ")}`] : []),
      ...(kept.length ? [`- Left as they are (too large to have been saved): ${kept.join(", ")}`] : []),
      "`/redo` re-applies it.",
    ].join("\n");
  }

  async redo(files: FileAccess): Promise<string> {
    await this.chain;
    const all = (await this.all()).filter((c) => c.state !== "dropped");
    let i = all.length;
    while (i > 0 && all[i - 1]!.state === "undone") i--;
    const target = all[i];
    if (!target) return "Nothing to redo.";
    for (const f of target.files) {
      if (f.tooLarge !== undefined) continue;
      if (f.after === null || f.after === undefined) await unlinkPinned(f.path).catch(() => undefined);
      else await this.put(files, f.path, await this.blob(f.after));
    }
    target.state = "active";
    await this.store.batch([{ type: "put", key: checkpointKeys.checkpoint(this.sessionId, target.n), value: target }], true);
    return `**Redid checkpoint ${target.n}**: ${target.files.map((f) => this.show(f.path)).join(", ")} back as that turn left them.`;
  }

  async list(): Promise<string> {
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

  private async captureNow(path: string, read?: () => Promise<{ text: string; encoding: string }>): Promise<void> {
    if (this.open?.files.some((f) => f.path === path)) return;
    const ops: Array<{ type: "put"; key: string; value: unknown }> = [];
    if (!this.open) {
      const all = await this.all();
      // A new change: what was undone before it can no longer be redone.
      for (const c of all.filter((c) => c.state === "undone")) {
        c.state = "dropped";
        ops.push({ type: "put", key: checkpointKeys.checkpoint(this.sessionId, c.n), value: c });
      }
      this.open = { n: (all.at(-1)?.n ?? 0) + 1, at: new Date().toISOString(), files: [], state: "active" };
    }
    const found = await bytesOf(path);
    let bytes = Buffer.isBuffer(found) ? found : null;
    if (bytes && read && !looksBinary(bytes) && decodeBytes(bytes).encoding === "utf8") {
      const seen = await read().catch(() => undefined);
      if (seen?.encoding === "utf8") bytes = Buffer.from(seen.text, "utf8");
    }
    const tooLarge = found && !Buffer.isBuffer(found) ? found.tooLarge : bytes && bytes.length > MAX_SAVED_BYTES ? bytes.length : undefined;
    if (tooLarge !== undefined) {
      this.open.files.push({ path, before: null, tooLarge });
      ops.push({ type: "put", key: checkpointKeys.checkpoint(this.sessionId, this.open.n), value: this.open });
      await this.store.batch(ops, true);
      return;
    }
    let before: string | null = null;
    if (bytes) {
      before = hashOf(bytes);
      ops.push({ type: "put", key: checkpointKeys.blob(this.sessionId, before), value: { data: bytes.toString("base64") } });
    }
    this.open.files.push({ path, before, ...(bytes ? {} : { dirs: await missingDirs(path) }) });
    ops.push({ type: "put", key: checkpointKeys.checkpoint(this.sessionId, this.open.n), value: this.open });
    await this.store.batch(ops, true);
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
