/**
 * The start of a small text file the daemon reads on its own account (project instructions,
 * custom commands, a plugin's manifest, a checkout's `.git` and HEAD). Those paths come from the
 * workspace, which may be an unpacked archive or a repository with a symlink to `/dev/zero` in
 * it: so never more than `maxBytes` is read, and anything but a regular file is not read at all
 * (opened non-blocking, so a FIFO does not hold a thread of the pool every file operation shares).
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

export interface Head {
  text: string;
  /** false when the file goes on past `maxBytes` */
  complete: boolean;
}

/** Undefined when `path` is not a regular file; rejects as the file system does (ENOENT, EACCES, …). */
export async function readHead(path: string, maxBytes: number): Promise<Head | undefined> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    const complete = length <= maxBytes;
    return { text: buffer.toString("utf8", 0, Math.min(length, maxBytes)), complete };
  } finally {
    await handle.close();
  }
}
