/**
 * What a checkpointed file holds, as the checkpoints compare and save it: its bytes on disk, or for
 * UTF-8 text its editor's buffer when the editor offers fs (what the user sees and the tools wrote).
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { decodeBytes, looksBinary, NotRegularFileError } from "../tools/local-files.js";
import type { FileAccess } from "../tools/types.js";

/** A file larger than this is not copied into the store; undo names it instead of restoring it. */
export const MAX_SAVED_BYTES = 16 * 1024 * 1024;

export const hashOf = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/** The digest a write's text is remembered by: what it left, whatever encoding it landed in. */
export const textDigest = (text: string): string => hashOf(Buffer.from(text, "utf8"));

/**
 * The file's bytes; only its size when that is over MAX_SAVED_BYTES (it is not saved, so not read);
 * null when absent. Anything but a regular file is refused.
 */
export async function bytesOf(path: string): Promise<Buffer | { tooLarge: number } | null> {
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
export async function missingDirs(path: string): Promise<string[]> {
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

/** What a file holds now: its bytes and, when it is text, the text; its size alone when too large; null when absent. */
export type Held = { bytes: Buffer; text: string | undefined } | { tooLarge: number } | null;

/**
 * What `path` holds now as the tools see it. UTF-8 text (or a file not on disk) is read through
 * `files`, so an editor's unsaved buffer counts; anything else is the disk's bytes.
 */
export async function holding(files: FileAccess, path: string): Promise<Held> {
  const disk = await bytesOf(path);
  if (disk && !Buffer.isBuffer(disk)) return disk;
  const decoded = disk && !looksBinary(disk) ? decodeBytes(disk) : undefined;
  if (disk && decoded?.encoding !== "utf8") return { bytes: disk, text: decoded?.text };
  const seen = await files.read(path).catch(() => undefined);
  if (seen?.encoding === "utf8") return { bytes: Buffer.from(seen.text, "utf8"), text: seen.text };
  return disk ? { bytes: disk, text: decoded?.text } : null;
}

/** Whether `held` is the saved content `saved` (null: absent), compared as text when both are text. */
export function holds(held: Held, saved: Buffer | null): boolean {
  if (held === null || saved === null) return held === saved;
  if (!("bytes" in held)) return false;
  const text = looksBinary(saved) ? undefined : decodeBytes(saved).text;
  return held.text !== undefined && text !== undefined ? held.text === text : held.bytes.equals(saved);
}

/** Whether `held` is still the text a write left (its digest). */
export const stillLeft = (held: Held, digest: string): boolean =>
  held !== null && "bytes" in held && held.text !== undefined && textDigest(held.text) === digest;
