/**
 * What the model last saw of each file, for the stale check: an edit is made from what the model
 * read, so an edit of a file that has changed since (on disk, or in the editor's unsaved buffer)
 * could undo someone else's work and is refused until the model reads it again. Only a digest is
 * kept per file, in memory, for the session; a file the model never read is not judged.
 */
import { createHash } from "node:crypto";

const digest = (text: string): string => createHash("sha256").update(text).digest("base64");

export class FileSnapshots {
  private readonly seen = new Map<string, string>();

  /** The model has seen `text` as the content of `path` (a read, or its own write). */
  remember(path: string, text: string): void {
    this.seen.set(path, digest(text));
  }

  /** True when the model saw `path` and its content is no longer what it saw. */
  isStale(path: string, current: string): boolean {
    const last = this.seen.get(path);
    return last !== undefined && last !== digest(current);
  }

  forget(path: string): void {
    this.seen.delete(path);
  }
}

export function staleMessage(shown: string): string {
  return `${shown} has changed since you last read it (on disk or in the editor). Read the file again, then make your edit against its current content. Nothing was changed.`;
}
