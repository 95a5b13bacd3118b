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
  const json = verifiedJson(text);
  if (json === DAMAGED) return DAMAGED;
  try {
    return JSON.parse(json);
  } catch {
    return DAMAGED;
  }
}

/**
 * A stored value's JSON text once its sum matches, unparsed (what the text behind a sum holds is
 * JSON.stringify's own output); DAMAGED when it does not. A value from before checksums is parsed
 * once, to be sure it is JSON.
 */
export function verifiedJson(text: string): string | Damaged {
  if (!text.startsWith(MARK)) {
    try {
      JSON.parse(text);
      return text;
    } catch {
      return DAMAGED;
    }
  }
  const json = text.slice(1 + SUM_LENGTH);
  return sum(json) === text.slice(1, 1 + SUM_LENGTH) ? json : DAMAGED;
}

/** The value encoding handed to `level` (a level-transcoder codec). */
export const checkedJson = {
  name: "reasonix-checked-json",
  format: "utf8" as const,
  encode: encodeValue,
  decode: decodeValue,
};
