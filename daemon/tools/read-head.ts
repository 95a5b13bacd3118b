/**
 * The start of a small text file the daemon reads on its own account (project instructions,
 * custom commands, a plugin's manifest, a checkout's `.git` and HEAD). Those paths come from the
 * workspace, which may be an unpacked archive or a repository with a symlink to `/dev/zero` in
 * it: so never more than `maxBytes` is read, and anything but a regular file is not read at all.
 */
import { constants, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

export interface Head {
  text: string;
  /** false when the file goes on past `maxBytes` */
  complete: boolean;
}

/**
 * Runs `use` on `path` opened for reading when it is a regular file; undefined, nothing read, when
 * it is anything else. Opened non-blocking: opening a FIFO for reading would otherwise wait for a
 * writer, holding a thread of the pool every file operation of the daemon shares. Checked on the
 * open handle, so the file measured is the file read.
 */
export async function withRegularFile<T>(path: string, use: (handle: FileHandle, stats: Stats) => Promise<T>): Promise<T | undefined> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    return stats.isFile() ? await use(handle, stats) : undefined;
  } finally {
    await handle.close();
  }
}

/** Undefined when `path` is not a regular file; rejects as the file system does (ENOENT, EACCES, …). */
export function readHead(path: string, maxBytes: number): Promise<Head | undefined> {
  return withRegularFile(path, async (handle) => {
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return { text: buffer.toString("utf8", 0, Math.min(length, maxBytes)), complete: length <= maxBytes };
  });
}
