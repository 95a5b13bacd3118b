/**
 * How a text file's bytes become text and back without losing any. UTF-8 is tried first (strictly);
 * a UTF-16 file is known by its byte-order mark; anything else is put to chardet (a detector ported
 * from ICU's, typed and dependency-free), and its candidates are tried in order of confidence with
 * iconv-lite (the decoder most of npm already relies on, pure JavaScript, with GBK/GB18030, Shift_JIS,
 * EUC-KR, Big5, the Windows code pages …): the first that turns the text back into exactly the same
 * bytes wins. Latin-1, which maps every byte to itself, is the last resort, so a read followed by a
 * write never changes a byte the model did not touch.
 */
import { createRequire } from "node:module";
import type * as Chardet from "chardet";
import type Iconv from "iconv-lite";

// Loaded on first use (a file that is not UTF-8 or Latin-1), synchronously: iconv-lite's tables
// would otherwise be parsed at every daemon start and held for its life.
const load = createRequire(import.meta.url);
let iconvLite: typeof Iconv | undefined;
const iconv = (): typeof Iconv => (iconvLite ??= load("iconv-lite") as typeof Iconv);
const analyse = (bytes: Uint8Array): ReturnType<typeof Chardet.analyse> => (load("chardet") as typeof Chardet).analyse(bytes);

/** "utf8", "latin1", or an iconv-lite encoding name (lower case), e.g. "gb18030", "utf-16le". */
export type TextEncodingName = string;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Candidates below this confidence are guesses on too little text; Latin-1 is as good then. */
const MIN_CONFIDENCE = 10;
/** The detector reads this much; the round trip that confirms its answer covers the whole file. */
const DETECT_BYTES = 64 * 1024;

function utf16Of(bytes: Uint8Array): TextEncodingName | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return undefined;
}

/** A UTF-16 file is full of NUL bytes and still text: the binary check must not see it. */
export function isUtf16(bytes: Uint8Array): boolean {
  return utf16Of(bytes) !== undefined;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Text in `encoding`, byte-order mark kept in the text (so it is written back too). */
function decodeAs(bytes: Uint8Array, encoding: TextEncodingName): string {
  if (encoding === "utf8") return strictUtf8.decode(bytes);
  if (encoding === "latin1") return asBuffer(bytes).toString("latin1");
  return iconv().decode(asBuffer(bytes), encoding, { stripBOM: false });
}

export function encodeText(text: string, encoding: TextEncodingName): Buffer {
  if (encoding === "utf8" || encoding === "latin1") return Buffer.from(text, encoding);
  return iconv().encode(text, encoding, { addBOM: false });
}

/** Whether `text` survives a trip through `encoding` (Latin-1 holds U+0000–U+00FF only, GBK no emoji …). */
export function fitsEncoding(text: string, encoding: TextEncodingName): boolean {
  if (encoding === "utf8" || encoding.startsWith("utf-16")) return true;
  if (encoding === "latin1") return !/[^\u0000-\u00ff]/.test(text);
  return iconv().decode(encodeText(text, encoding), encoding, { stripBOM: false }) === text;
}

/** The name the model and the user are shown. */
export function encodingLabel(encoding: TextEncodingName): string {
  return encoding === "utf8" ? "UTF-8" : encoding === "latin1" ? "Latin-1" : encoding.toUpperCase();
}

export function decodeBytes(bytes: Uint8Array): { text: string; encoding: TextEncodingName } {
  const utf16 = utf16Of(bytes);
  if (utf16) return { text: decodeAs(bytes, utf16), encoding: utf16 };
  try {
    return { text: strictUtf8.decode(bytes), encoding: "utf8" };
  } catch {
    // Not UTF-8: ask the detector, and trust only an answer that gives back the very same bytes.
  }
  for (const candidate of analyse(bytes.subarray(0, DETECT_BYTES))) {
    const name = candidate.name.toLowerCase();
    if (candidate.confidence < MIN_CONFIDENCE || name === "iso-8859-1") break;
    if (name.startsWith("utf-16") || name.startsWith("utf-32") || !iconv().encodingExists(name)) continue;
    const text = decodeAs(bytes, name);
    if (encodeText(text, name).equals(asBuffer(bytes))) return { text, encoding: name };
  }
  return { text: decodeAs(bytes, "latin1"), encoding: "latin1" };
}
