/**
 * Text files on the local disk. Bytes survive a read → write round trip: a file that is not valid
 * UTF-8 is read as Latin-1 (one char per byte) and written back the same way, and a UTF-8 BOM is
 * kept in the text rather than silently dropped.
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { FileAccess, TextEncodingName } from "./types.js";

/** How far into a file we look for NUL bytes; the same heuristic git and grep use. */
export const BINARY_PROBE_BYTES = 8192;

export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes text the way `read` does, without the binary check. */
export function decodeBytes(bytes: Uint8Array): { text: string; encoding: TextEncodingName } {
  try {
    return { text: strictUtf8.decode(bytes), encoding: "utf8" };
  } catch {
    return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1"), encoding: "latin1" };
  }
}

/** Latin-1 can hold only U+0000–U+00FF; anything above would be silently mangled by Buffer. */
export function fitsLatin1(text: string): boolean {
  return !/[^\u0000-\u00ff]/.test(text);
}

export class BinaryFileError extends Error {
  constructor(path: string) {
    super(`${path} is a binary file (it contains NUL bytes); only text files can be read or edited`);
    this.name = "BinaryFileError";
  }
}

async function existingEncoding(path: string): Promise<TextEncodingName | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    return undefined;
  }
  return looksBinary(bytes) ? undefined : decodeBytes(bytes).encoding;
}

export function localFiles(): FileAccess {
  return {
    async read(path) {
      const bytes = await readFile(path);
      if (looksBinary(bytes)) throw new BinaryFileError(path);
      return decodeBytes(bytes);
    },

    async write(path, text, encoding) {
      let enc = encoding;
      if (!enc) {
        enc = (await existingEncoding(path)) ?? "utf8";
        // Only an inferred Latin-1 may give way to UTF-8; an explicit one is a promise to keep bytes.
        if (enc === "latin1" && !fitsLatin1(text)) enc = "utf8";
      }
      if (enc === "latin1" && !fitsLatin1(text)) {
        throw new Error(`${path} is a Latin-1 file and the new text has characters Latin-1 cannot encode`);
      }
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, Buffer.from(text, enc));
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
