/**
 * The store folder as the daemon opened it. LevelDB holds its files open and names new ones by path:
 * a folder removed or renamed away under a running daemon goes on taking writes into files nobody
 * will open again (and new tables land in whatever folder now has the name), with no error at all.
 * So the store keeps the folder's identity from open on (device and inode of the folder and of its
 * LOCK file, which LevelDB never replaces while it runs) and compares it around every write and on
 * a timer; and it asks the kernel whether the folder can still be written.
 */
import { accessSync, constants, statfsSync, statSync } from "node:fs";
import { join } from "node:path";

/** Free space a reopen needs before it is tried: LevelDB turns the old log into a table first. */
export const MIN_FREE_BYTES = 4 * 1024 * 1024;

/** "gone": never written again under this daemon; "unwritable": written again once it can be. */
export type FolderFault = "gone" | "unwritable";

export interface FolderProblem {
  fault: FolderFault;
  message: string;
}

interface Identity {
  dev: number;
  ino: number;
}

const RESTART = "nothing more can be saved until the daemon is restarted";

function identityOf(path: string): Identity | NodeJS.ErrnoException {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

const missing = (e: NodeJS.ErrnoException): boolean => e.code === "ENOENT" || e.code === "ENOTDIR";

export class StoreFolder {
  private constructor(
    readonly dir: string,
    private readonly folder: Identity,
    private readonly lock: Identity,
  ) {}

  /** The folder's identity now: call right after LevelDB opened it (its LOCK file exists then). */
  static capture(dir: string): StoreFolder {
    const folder = identityOf(dir);
    const lock = identityOf(join(dir, "LOCK"));
    if (folder instanceof Error) throw folder;
    if (lock instanceof Error) throw lock;
    return new StoreFolder(dir, folder, lock);
  }

  /**
   * Why this is no longer the folder the store opened, or undefined. Two stats: cheap enough to run
   * before and after every write, so nothing written after the folder went is acknowledged.
   */
  identityProblem(): FolderProblem | undefined {
    const folder = identityOf(this.dir);
    if (folder instanceof Error) {
      if (missing(folder)) return { fault: "gone", message: `the store folder ${this.dir} was removed while the daemon ran; ${RESTART}` };
      return { fault: "unwritable", message: `the store folder ${this.dir} cannot be reached (${folder.code ?? folder.message})` };
    }
    if (folder.dev !== this.folder.dev || folder.ino !== this.folder.ino) {
      return { fault: "gone", message: `the store folder ${this.dir} was replaced while the daemon ran (it is not the folder the daemon opened); ${RESTART}` };
    }
    const lock = identityOf(join(this.dir, "LOCK"));
    if (lock instanceof Error ? missing(lock) : lock.dev !== this.lock.dev || lock.ino !== this.lock.ino) {
      return {
        fault: "gone",
        message: `the files of the store folder ${this.dir} were removed or replaced while the daemon ran (its LOCK file is not the one the daemon holds); ${RESTART}`,
      };
    }
    return undefined;
  }

  /** access(2) honours the folder's mode, a read-only mount and the immutable flag (the last two even for root). */
  writableProblem(): FolderProblem | undefined {
    try {
      accessSync(this.dir, constants.W_OK);
      return undefined;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (missing(e)) return this.identityProblem();
      return { fault: "unwritable", message: `the store folder ${this.dir} is not writable (${e.code ?? e.message})` };
    }
  }

  /** Identity first: a folder that is gone is gone, whatever else is true of the path now. */
  problem(): FolderProblem | undefined {
    return this.identityProblem() ?? this.writableProblem();
  }

  freeBytes(): number {
    try {
      const st = statfsSync(this.dir);
      return st.bavail * st.bsize;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  }
}
