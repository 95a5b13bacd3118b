/**
 * The start of a small text file the daemon reads on its own account (project instructions,
 * custom commands, a plugin's manifest, a checkout's `.git` and HEAD). Those paths come from the
 * workspace, which may be an unpacked archive or a repository with a symlink to `/dev/zero` or
 * `/proc/self/environ` in it: so never more than `maxBytes` is read, anything but a regular file is
 * not read at all, and given `inside` (real paths) a file whose real path lies elsewhere is not
 * read either — what is read then rides in the system prompt to the provider and into the store.
 */
import { constants, readlinkSync, type Stats } from "node:fs";
import { type FileHandle, open, realpath, stat } from "node:fs/promises";
import { isInside } from "./workspace.js";

export interface Head {
  text: string;
  /** false when the file goes on past `maxBytes` */
  complete: boolean;
}

/** A file not read because its real path (every link followed) lies outside the folders allowed. */
export class OutsideError extends Error {
  override name = "OutsideError";
  readonly code = "EOUTSIDE";
  constructor(
    /** the path as asked for */
    readonly path: string,
    /** where it really leads */
    readonly real: string,
  ) {
    super(`${path} links outside the folders it may be read from (to ${real})`);
  }
}

/** What a notice calls where the project's own files may lie, and where the user's may. */
export const PROJECT_BOUNDARY = "the repository and the session's folders";
export const CONFIG_BOUNDARY = "the config folder";

/** The user's notice for a skipped file: which one, out of what, and where it really leads. */
export function outsideNotice(shown: string, boundary: string, real: string): string {
  return `Skipped ${shown}: it links outside ${boundary} (to ${real}).`;
}

/**
 * Where the file open as `fd` really is, from the kernel (Linux's /proc/self/fd): the very file
 * read, so a link swapped after a check cannot slip past it. Undefined where there is no such view.
 */
export function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * `path`'s real path when it lies inside `inside` (real paths); else OutsideError. Rejects as the
 * file system does for a path that does not resolve (ENOENT for a dangling link, …).
 */
export async function realPathInside(path: string, inside: readonly string[]): Promise<string> {
  const real = await realpath(path);
  if (!isInside(real, inside)) throw new OutsideError(path, real);
  return real;
}

/** The open file is the one checked: by the kernel's own name for it, else by identity with `real`. */
async function confirmOpened(path: string, real: string, handle: FileHandle, stats: Stats, inside: readonly string[]): Promise<void> {
  const opened = openedPath(handle.fd);
  if (opened !== undefined) {
    if (!isInside(opened, inside)) throw new OutsideError(path, opened);
    return;
  }
  const now = await stat(real);
  if (now.dev !== stats.dev || now.ino !== stats.ino) throw new OutsideError(path, real);
}

/**
 * Runs `use` on `path` opened for reading when it is a regular file; undefined, nothing read, when
 * it is anything else. Opened non-blocking: opening a FIFO for reading would otherwise wait for a
 * writer, holding a thread of the pool every file operation of the daemon shares. Checked on the
 * open handle, so the file measured is the file read. Given `inside`, the real path is checked
 * first (nothing outside is even opened), then the file opened is confirmed to be the one checked.
 */
export async function withRegularFile<T>(
  path: string,
  use: (handle: FileHandle, stats: Stats) => Promise<T>,
  inside?: readonly string[],
): Promise<T | undefined> {
  const target = inside ? await realPathInside(path, inside) : path;
  // A real path has no link left in it: one that appears there since was put there since.
  const handle = await open(target, constants.O_RDONLY | constants.O_NONBLOCK | (inside ? constants.O_NOFOLLOW : 0));
  try {
    const stats = await handle.stat();
    if (inside) await confirmOpened(path, target, handle, stats, inside);
    return stats.isFile() ? await use(handle, stats) : undefined;
  } finally {
    await handle.close();
  }
}

/**
 * Undefined when `path` is not a regular file; rejects as the file system does (ENOENT, EACCES, …),
 * and with OutsideError when `inside` is given and the file really lies elsewhere.
 */
export function readHead(path: string, maxBytes: number, inside?: readonly string[]): Promise<Head | undefined> {
  return withRegularFile(
    path,
    async (handle) => {
      const buffer = Buffer.alloc(maxBytes + 1);
      let length = 0;
      while (length < buffer.length) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      return { text: buffer.toString("utf8", 0, Math.min(length, maxBytes)), complete: length <= maxBytes };
    },
    inside,
  );
}
