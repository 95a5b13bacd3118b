/** How error messages quote what a caller sent. */
/** Longest caller-supplied value (a session id, a method name) an error message quotes whole. */
export const QUOTE_MAX_CHARS = 128;

/**
 * A caller-supplied value as an error message quotes it: whole when short, else its start and its
 * length, so a 2 MiB session id does not come back in the message (`data` carries it exactly).
 */
export function clipped(value: string, max = QUOTE_MAX_CHARS): string {
  if (value.length <= max) return value;
  // Never end on the first half of a surrogate pair: the message must stay valid UTF-16.
  const end = /[\uD800-\uDBFF]/.test(value[max - 1]!) ? max - 1 : max;
  return `${value.slice(0, end)}… (${value.length} characters)`;
}
