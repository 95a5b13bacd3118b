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
  return crc32(json) === storedSum(text) ? json : DAMAGED;
}

/**
 * The sum written in front of a value, as a number; -1 when it is not 8 lowercase hex digits.
 * Compared as numbers: writing each value's sum out in hex again was a tenth of a long replay's
 * CPU (Number#toString(16) divides in floating point).
 */
function storedSum(text: string): number {
  let n = 0;
  for (let i = 1; i <= SUM_LENGTH; i++) {
    const c = text.charCodeAt(i);
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) return -1;
    n = n * 16 + digit;
  }
  return n;
}

/** The value encoding handed to `level` (a level-transcoder codec). */
export const checkedJson = {
  name: "reasonix-checked-json",
  format: "utf8" as const,
  encode: encodeValue,
  decode: decodeValue,
};
