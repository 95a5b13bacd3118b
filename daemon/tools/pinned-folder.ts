/**
 * Writes that a link cannot redirect. A path is checked against the workspace (resolved through
 * links) and written later; a folder along it swapped for a symlink in between would send a write
 * by path wherever the link points. So a write first opens its folder (O_DIRECTORY | O_NOFOLLOW),
 * checks what the kernel says that open folder is (`/proc/self/fd/N`) against the path that was
 * checked, and then creates, renames and removes only through `/proc/self/fd/N/<name>`: the kernel
 * resolves that through the already open folder, so a later swap of the path cannot move it.
 * Node has no openat/renameat; this is their equivalent.
 *
 * Missing folders (mkdir -p) are created one level at a time the same way: each new level is made
 * and opened through its verified parent, never through a link, and given the mode the caller asks
 * (the session's umask, not the daemon's: umask.ts) through its open descriptor.
 *
 * Only on Linux with /proc mounted. Elsewhere (macOS has no such magic links) the folder is used
 * by path, as before: the boundary check stands, the swap race is not closed there.
 */
import { constants, existsSync } from "node:fs";
import { chmod, lstat, mkdir, open, readlink, rmdir, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** A folder along the path changed (became a link, moved or went away) between the check and the write. */
export class FolderChangedError extends Error {
  readonly code = "EFOLDERCHANGED";
  constructor(path: string) {
    super(`the folder of ${path} changed while writing (a link or another folder took its place); nothing was written`);
    this.name = "FolderChangedError";
  }
}

/** A folder opened and verified: names in it are reached through the open folder, not the path. */
export interface PinnedFolder {
  /** The folder's path, as it was checked. */
  readonly path: string;
  /** A path for `name` inside this very folder, whatever happened to `path` since it was opened. */
  at(name: string): string;
  /** Whether the open folder is no longer at `path` (moved or removed since it was verified). */
  moved(): Promise<boolean>;
  /** Makes a rename in it durable, where the file system can. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

let procFd: boolean | undefined;
/** Whether `/proc/self/fd/N` paths work here (Linux with /proc mounted). */
export function pinsFolders(): boolean {
  procFd ??= process.platform === "linux" && existsSync("/proc/self/fd");
  return procFd;
}

/** Make missing folders, each with `mode` (the daemon's own umask does not apply to it). */
export interface CreateFolders {
  mode: number;
}

/**
 * Opens `dir` (absolute, already resolved through links and checked) and verifies the opened folder
 * is that one. With `create`, missing levels are made first, each through its verified parent.
 */
export async function pinFolder(dir: string, create: CreateFolders | false = false): Promise<PinnedFolder> {
  if (!pinsFolders()) {
    if (create) await mkdirByPath(dir, create.mode);
    return byPath(dir);
  }
  let handle: FileHandle;
  let made = false;
  try {
    handle = await open(dir, DIR_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // O_NOFOLLOW on a link gives ENOTDIR (with O_DIRECTORY) or ELOOP: the folder turned into a link.
    if ((code === "ENOTDIR" || code === "ELOOP") && (await notAFile(dir))) throw new FolderChangedError(dir);
    if (code !== "ENOENT" || !create || dirname(dir) === dir) throw err;
    const parent = await pinFolder(dirname(dir), create);
    try {
      const inParent = parent.at(basename(dir));
      made = await mkdir(inParent).then(
        () => true,
        (e: NodeJS.ErrnoException) => {
          if (e.code !== "EEXIST") throw e;
          return false;
        },
      );
      // Whatever is there now (made by us or raced in), a link is refused by O_NOFOLLOW; gone
      // again right after mkdir means something else is moving folders here.
      handle = await open(inParent, DIR_FLAGS).catch(async (e: NodeJS.ErrnoException) => {
        const changed = e.code === "ENOENT" || ((e.code === "ENOTDIR" || e.code === "ELOOP") && (await notAFile(inParent)));
        throw changed ? new FolderChangedError(dir) : e;
      });
    } catch (e) {
      throw e instanceof FolderChangedError || !(await parent.moved()) ? e : new FolderChangedError(dir);
    } finally {
      await parent.close();
    }
  }
  try {
    // The kernel's own name for the open folder: where anything made through it really lands.
    if ((await readlink(`/proc/self/fd/${handle.fd}`)) !== dir) throw new FolderChangedError(dir);
    // Only a folder this call made; through the descriptor, so a name swapped since cannot redirect it.
    if (made && create) await handle.chmod(create.mode);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return {
    path: dir,
    at: (name) => `/proc/self/fd/${handle.fd}/${name}`,
    moved: async () => (await readlink(`/proc/self/fd/${handle.fd}`).catch(() => "")) !== dir,
    sync: () => handle.sync().catch(() => undefined),
    close: () => handle.close(),
  };
}

export async function withPinnedFolder<T>(dir: string, create: CreateFolders | false, fn: (folder: PinnedFolder) => Promise<T>): Promise<T> {
  const folder = await pinFolder(dir, create);
  try {
    return await fn(folder);
  } finally {
    await folder.close();
  }
}

/**
 * Runs `fn` in the verified folder of `path`. A failure after the folder moved or went away (a swap
 * racing the work) is reported as FolderChangedError, the cause the model can act on.
 */
export function inPinnedFolder<T>(path: string, create: CreateFolders | false, fn: (folder: PinnedFolder, name: string) => Promise<T>): Promise<T> {
  return withPinnedFolder(dirname(path), create, async (folder) => {
    try {
      return await fn(folder, basename(path));
    } catch (err) {
      throw err instanceof FolderChangedError || !(await folder.moved()) ? err : new FolderChangedError(path);
    }
  });
}

/** Removes the file `path` from its verified folder: a swapped parent cannot aim it elsewhere. */
export function unlinkPinned(path: string): Promise<void> {
  return inPinnedFolder(path, false, (folder, name) => unlink(folder.at(name)));
}

/** Removes the empty folder `path` from its verified parent. */
export function rmdirPinned(path: string): Promise<void> {
  return inPinnedFolder(path, false, (folder, name) => rmdir(folder.at(name)));
}

/**
 * After ENOTDIR or ELOOP: whether that came from a link (or a link that has come and gone by now)
 * rather than a file standing where a folder should be, which keeps its own error.
 */
async function notAFile(path: string): Promise<boolean> {
  try {
    const st = await lstat(path);
    return st.isSymbolicLink() || st.isDirectory();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** mkdir -p by path (where folders cannot be pinned), each folder it made given `mode`. */
async function mkdirByPath(dir: string, mode: number): Promise<void> {
  const first = await mkdir(dir, { recursive: true });
  if (first === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    await chmod(d, mode);
    if (d === first || dirname(d) === d) return;
  }
}

/** The fallback where a folder cannot be pinned: by path, as writes were before. */
function byPath(dir: string): PinnedFolder {
  return {
    path: dir,
    at: (name) => join(dir, name),
    moved: async () => false,
    sync: async () => {
      try {
        const handle = await open(dir, "r");
        await handle.sync().finally(() => handle.close());
      } catch {
        // Some file systems cannot sync a folder; only the rename's durability is left to the kernel.
      }
    },
    close: async () => undefined,
  };
}
