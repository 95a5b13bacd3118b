/**
 * How values are stored: JSON behind a CRC-32 of its text. LevelDB verifies its own block checksums
 * only on request, and classic-level never asks, so a flipped byte inside a table would otherwise
 * come back as a silently different value. A value whose sum does not match decodes to DAMAGED; the
 * store reports it instead of handing it on.
 */
import { crc32 } from "node:zlib";

/** Stands for a value that failed its checksum or does not parse. */
export const DAMAGED: unique symbol = Symbol("damaged store value");
export type Damaged = typeof DAMAGED;

const MARK = "~";
const SUM_LENGTH = 8;

const sum = (text: string): string => crc32(text).toString(16).padStart(SUM_LENGTH, "0");

export function encodeValue(value: unknown): string {
  const json = JSON.stringify(value);
  return `${MARK}${sum(json)}${json}`;
}

export function decodeValue(text: string): unknown {
  try {
    // Stores written before checksums hold bare JSON; those values are read as they are.
    if (!text.startsWith(MARK)) return JSON.parse(text);
    const json = text.slice(1 + SUM_LENGTH);
    if (sum(json) !== text.slice(1, 1 + SUM_LENGTH)) return DAMAGED;
    return JSON.parse(json);
  } catch {
    return DAMAGED;
  }
}

/** The value encoding handed to `level` (a level-transcoder codec). */
export const checkedJson = {
  name: "reasonix-checked-json",
  format: "utf8" as const,
  encode: encodeValue,
  decode: decodeValue,
};
