/**
 * Text files on the local disk. Bytes survive a read → write round trip: a file that is not valid
 * UTF-8 is read in the encoding it was detected in (text-encoding.ts: GBK, Shift_JIS, UTF-16, …, or
 * Latin-1, one char per byte, as the last resort) and written back the same way, and a byte-order
 * mark is kept in the text rather than silently dropped. Writes are atomic (see writeAtomic).
 */
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { access, lstat, open, rename, stat, unlink } from "node:fs/promises";
import { inPinnedFolder } from "./pinned-folder.js";
import { withRegularFile } from "./read-head.js";
import type { FileAccess } from "./types.js";
import { decodeBytes, encodeText, encodingLabel, fitsEncoding, isUtf16, type TextEncodingName } from "./text-encoding.js";
import { fileMode, folderMode } from "./umask.js";

export { decodeBytes } from "./text-encoding.js";

/** How far into a file we look for NUL bytes; the same heuristic git and grep use. */
export const BINARY_PROBE_BYTES = 8192;

export function looksBinary(bytes: Uint8Array): boolean {
  return !isUtf16(bytes) && bytes.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

export class BinaryFileError extends Error {
  constructor(path: string) {
    super(`${path} is a binary file (it contains NUL bytes); only text files can be read or edited`);
    this.name = "BinaryFileError";
  }
}

/**
 * The largest file the tools read whole. One daemon serves every window: a model asking for a
 * multi-gigabyte log must not take the memory all of them share. Larger files are for grep and
 * for commands that read a part (sed, head, tail).
 */
export const MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024;

export class FileTooLargeError extends Error {
  constructor(path: string, size: number) {
    const mib = (n: number): string => `${(n / (1024 * 1024)).toFixed(1)} MiB`;
    super(
      `${path} is ${mib(size)}; files are read whole up to ${mib(MAX_TEXT_FILE_BYTES)}. ` +
        "Search it with grep, or read a part with run_command (sed -n '100,200p', head, tail).",
    );
    this.name = "FileTooLargeError";
  }
}

export class NotRegularFileError extends Error {
  constructor(path: string) {
    super(`${path} is not a regular file (a device, pipe or socket); only text files can be read or edited`);
    this.name = "NotRegularFileError";
  }
}

/**
 * The file's bytes, refused before reading when it is too large or not a regular file (a FIFO
 * would block the read forever, /dev/zero would never end it).
 */
async function readBounded(path: string): Promise<Buffer> {
  const bytes = await withRegularFile(path, async (handle, st) => {
    if (st.size > MAX_TEXT_FILE_BYTES) throw new FileTooLargeError(path, st.size);
    return handle.readFile();
  });
  if (bytes !== undefined) return bytes;
  // Not a regular file: a folder keeps the answer the file system gives for one.
  if ((await stat(path)).isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: "EISDIR" });
  throw new NotRegularFileError(path);
}

async function existingEncoding(path: string): Promise<TextEncodingName | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readBounded(path);
  } catch {
    return undefined;
  }
  return looksBinary(bytes) ? undefined : decodeBytes(bytes).encoding;
}

/** `umask`: the session's, for the files and folders a write creates (umask.ts). */
export function localFiles(umask: number): FileAccess {
  return {
    async read(path) {
      const bytes = await readBounded(path);
      if (looksBinary(bytes)) throw new BinaryFileError(path);
      return decodeBytes(bytes);
    },

    async write(path, text, encoding) {
      let enc = encoding;
      if (!enc) {
        enc = (await existingEncoding(path)) ?? "utf8";
        // Only an inferred Latin-1 may give way to UTF-8; an explicit one is a promise to keep bytes.
        if (enc === "latin1" && !fitsEncoding(text, enc)) enc = "utf8";
      }
      if (!fitsEncoding(text, enc)) {
        const label = encodingLabel(enc);
        throw new Error(`${path} is a ${label} file and the new text has characters ${label} cannot encode`);
      }
      await writeAtomic(path, encodeText(text, enc), { umask, create: true });
    },

    async exists(path) {
      try {
        await stat(path);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/**
 * Replaces `path` with `bytes` through a temporary file in the same folder, flushed, then renamed
 * over it: a crash leaves the old file or the new one, never a torn one, and a hard link at `path`
 * is replaced rather than written through (it may be the workspace's name for a file outside it).
 * The file keeps its permission bits (and owner, where we may set it); a file we may not write stays
 * refused, as it was when written in place.
 *
 * `path` was resolved through links and checked; its folder is opened and verified to be that one
 * before anything is made in it (pinned-folder.ts), and the temporary file, the rename and any
 * missing folders (`create`) go through the open folder, so a folder swapped for a link meanwhile
 * cannot send the write elsewhere: it fails with FolderChangedError and writes nothing.
 *
 * A new file gets 0666 and a new folder 0777 less `umask` (the session's, not the daemon's own).
 */
export async function writeAtomic(path: string, bytes: Uint8Array, opts: { umask: number; create?: boolean }): Promise<void> {
  await inPinnedFolder(path, opts.create ? { mode: folderMode(opts.umask) } : false, async (folder, name) => {
    const target = folder.at(name);
    let old: Stats | undefined;
    try {
      old = await lstat(target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    // A link here was not there when the path was resolved: it is replaced, never written through.
    if (old?.isSymbolicLink()) old = undefined;
    // rename() only needs the folder to be writable; the file's own permission still decides.
    if (old) await access(target, constants.W_OK);
    const temp = folder.at(`.${name}.${randomBytes(6).toString("hex")}.tmp`);
    // Private until its mode is set: the daemon's own umask (077) applies to open's mode.
    const file = await open(temp, "wx", 0o600);
    try {
      try {
        if (old) {
          // Fails unless we are root or the owner already; either way nobody gains access.
          await file.chown(old.uid, old.gid).catch(() => undefined);
          await file.chmod(old.mode & 0o7777);
        } else await file.chmod(fileMode(opts.umask));
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, target);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await folder.sync();
  });
}
