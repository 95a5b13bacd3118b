/** Store failures, worded for the person who has to act on them. */
import type { FolderFault } from "./folder.js";

/** A write did not reach the disk. Every write fails with it until the store is writable again. */
export class StoreWriteError extends Error {
  override name = "StoreWriteError";
  constructor(
    message: string,
    /** Retrying makes sense only once space is back. */
    readonly diskFull: boolean,
    /** The store folder itself failed: "gone" is never retried, "unwritable" once it can be written. */
    readonly folder?: FolderFault,
  ) {
    super(message);
  }
}

/** Stored data that cannot be read back as it was written. */
export class StoreDamagedError extends Error {
  override name = "StoreDamagedError";
  constructor(
    readonly dir: string,
    readonly detail: string,
  ) {
    super(`the store at ${dir} is damaged: ${detail}`);
  }
}

function textOf(err: unknown): string {
  const e = err as { message?: unknown; cause?: { message?: unknown } } | undefined;
  return [e?.message, e?.cause?.message].filter((m) => typeof m === "string").join("; ") || String(err);
}

export function describeWriteFailure(dir: string, err: unknown): StoreWriteError {
  const text = textOf(err);
  if (/no space left|ENOSPC|disk quota|EDQUOT/i.test(text)) return new StoreWriteError(`no space left on the disk holding ${dir}`, true);
  if (/read-only file system|EROFS/i.test(text)) return new StoreWriteError(`the disk holding ${dir} is read-only`, false);
  if (/permission denied|EACCES|EPERM/i.test(text)) return new StoreWriteError(`no permission to write the store at ${dir}`, false);
  return new StoreWriteError(`the store at ${dir} could not be written: ${text}`, false);
}
