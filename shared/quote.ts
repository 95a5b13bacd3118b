/** How error messages quote what a caller sent. */
/** Longest caller-supplied value (a session id, a method name) an error message quotes whole. */
export const QUOTE_MAX_CHARS = 128;

/**
 * A caller-supplied value as an error message quotes it: whole when short, else its start and its
 * length, so a 2 MiB session id does not come back in the message (`data` carries it exactly).
 */
export function clipped(value: string, max = QUOTE_MAX_CHARS): string {
  if (value.length <= max) return value;
  return `${value.slice(0, safeCut(value, max))}… (${value.length} characters)`;
}

/** Where to cut `text` near `i` so the two halves of a surrogate pair stay together (valid UTF-16). */
export function safeCut(text: string, i: number): number {
  const c = text.charCodeAt(i - 1);
  return c >= 0xd800 && c <= 0xdbff ? i - 1 : i;
}
