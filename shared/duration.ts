/**
 * Durations as people write them on a command line and in config.json: a whole number and a unit,
 * `s`, `m`, `h` or `d` (`30d`, `12h`). `reasonix sessions prune --older-than` and the `retention`
 * config key read the same syntax, so what works in one works in the other.
 */
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const DURATION_HINT = "a whole number and s, m, h or d, such as 30d";

/** Milliseconds, or undefined when `text` is not a positive duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,9})([smhd])$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms > 0 ? ms : undefined;
}
