/** The peers benchmark's table: one row per measure and subject, with ratios to the floor and the best peer. */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../../support/harness.js";
import type { Installed } from "./agents.js";

// --- the table --------------------------------------------------------------------------------

function q(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? NaN;
}

const OURS = /^(reasonix|through shim)/;
const FLOORS = /floor|direct WebSocket|node -e/;

export function report(
  samples: Map<string, number[]>,
  peers: Installed[],
  problems: Map<string, string>,
  n: { noise: number[]; redone: number; noisyKept: number; rounds: number; quietCores: number },
): string {
  const groups = new Map<string, Array<{ who: string; s: number[] }>>();
  for (const [key, v] of samples) {
    const [measure, who] = key.split("|") as [string, string];
    (groups.get(measure) ?? groups.set(measure, []).get(measure)!).push({ who, s: [...v].sort((a, b) => a - b) });
  }
  const head = ["measure", "subject", "n", "median", "p90", "min–max", "× floor", "× best peer"];
  const rows: string[][] = [];
  for (const [measure, subjects] of groups) {
    const perSecond = measure.startsWith("chunks/s");
    const unit = measure.startsWith("memory") ? "MB" : measure.includes("bytes") ? "B" : perSecond ? "/s" : "ms";
    const fmt = (v: number): string => (unit === "B" || perSecond ? `${Math.round(v)} ${unit}` : `${v.toFixed(1)} ${unit}`);
    // Spawns stand on Node's own start; everything else on the direct client (or is the floor itself).
    const nodeFloor = groups.get("spawn → initialize (warm)")?.find((x) => x.who.includes("(floor)"));
    const floor = measure.startsWith("spawn") ? nodeFloor : subjects.find((x) => FLOORS.test(x.who));
    const peerMedians = subjects.filter((x) => !OURS.test(x.who) && !FLOORS.test(x.who)).map((x) => q(x.s, 0.5));
    const best = peerMedians.length ? (perSecond ? Math.max(...peerMedians) : Math.min(...peerMedians)) : undefined;
    for (const { who, s } of subjects) {
      const med = q(s, 0.5);
      const ratio = (ref: number | undefined): string => (ref && ref > 0 ? `${(med / ref).toFixed(2)}×` : "-");
      const isFloor = FLOORS.test(who);
      rows.push([
        measure,
        who,
        String(s.length),
        fmt(med),
        fmt(q(s, 0.9)),
        `${fmt(s[0]!)}–${fmt(s.at(-1)!)}`,
        floor && !isFloor ? ratio(q(floor.s, 0.5)) : "-",
        isFloor ? "-" : ratio(best),
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (c: string[]): string => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(" | ")} |`;
  const table = [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
  const ns = [...n.noise].sort((a, b) => a - b);
  const lines = [
    `node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ` +
      `${n.rounds} interleaved rounds. Other processes' CPU during the rounds: median ${q(ns, 0.5).toFixed(2)}, max ${(ns.at(-1) ?? 0).toFixed(2)} cores; ` +
      `${n.redone} round(s) redone for noise above ${n.quietCores} cores, ${n.noisyKept} kept noisy after two redos. ` +
      `Every process started without NODE_EXTRA_CA_CERTS.`,
    "",
    "```",
    table,
    "```",
    "",
    ...peers.map((p) => `- ${p.spec.pkg}: ${p.problem ?? `installed ${p.version}`}`),
    ...[...problems].map(([k, why]) => {
      const needs = peers.find((p) => k.startsWith(p.spec.name))?.spec.needs;
      return `- ${k.replace("|", " could not run ")}: ${why}${needs ? ` (${needs})` : ""}`;
    }),
  ];
  return lines.join("\n");
}

export function writeDocs(text: string): void {
  const path = join(REPO_ROOT, "docs", "benchmarks.md");
  const doc = readFileSync(path, "utf8");
  const start = "<!-- peers:start -->";
  const end = "<!-- peers:end -->";
  const block = `${start}\n${text}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  writeFileSync(
    path,
    i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n## Side by side with the peers\n\n${block}\n`,
  );
  process.stdout.write(`\nwritten to ${path}\n`);
}
