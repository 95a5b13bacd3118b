export interface Row {
  name: string;
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
  target: number | undefined;
  unit: string;
  /** The target is a floor every sample must reach, not a ceiling for the median. */
  atLeast?: boolean;
}

/** The q-quantile of samples already sorted ascending (the lower middle for a median of an even count). */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** The q-quantile of samples in any order. */
export function quantileOf(samples: readonly number[], q: number): number {
  return quantile(
    [...samples].sort((a, b) => a - b),
    q,
  );
}

export function summarize(name: string, samples: number[], target: number | undefined, unit = "ms"): Row {
  const s = [...samples].sort((a, b) => a - b);
  return { name, n: s.length, median: quantile(s, 0.5), p90: quantile(s, 0.9), min: s[0] ?? NaN, max: s.at(-1) ?? NaN, target, unit };
}

export function table(rows: Row[]): string {
  const head = ["measure", "n", "median", "p90", "min", "max", "target", "met"];
  const fmt = (v: number, unit: string): string => (Number.isFinite(v) ? `${v.toFixed(unit === "%" ? 3 : 1)} ${unit}` : "-");
  const body = rows.map((r) => [
    r.name,
    String(r.n),
    fmt(r.median, r.unit),
    fmt(r.p90, r.unit),
    fmt(r.min, r.unit),
    fmt(r.max, r.unit),
    r.target === undefined ? "-" : `${r.atLeast ? ">=" : "<"} ${r.target} ${r.unit}`,
    r.target === undefined ? "-" : (r.atLeast ? r.min >= r.target : r.median < r.target) ? "yes" : "NO",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}
