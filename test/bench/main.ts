/**
 * `npm run bench`: every benchmark, side by side in one run, printed as a table. Figures are
 * recorded in docs/benchmarks.md; tests never assert on time. `npm run bench -- --peers` runs the
 * side-by-side comparison with published ACP agents instead (peers.ts).
 */
import { cpus } from "node:os";
import { startupBench } from "./startup.js";
import { sessionsBench } from "./sessions.js";
import { prefixBench } from "./prefix.js";
import { compactionBench } from "./compaction.js";
import { loopLagBench } from "./loop-lag.js";
import { streamingBench } from "./streaming.js";
import { scaleBench } from "./scale.js";
import { sandboxBench } from "./sandbox.js";
import { growthBench } from "./growth.js";
import { table } from "./stats.js";

if (process.argv.includes("--peers")) {
  await import("./peers.js");
  process.exit(0);
}

const quick = process.argv.includes("--quick");
const rows = [...(await startupBench(quick ? { cold: 3, warm: 5 } : { cold: 10, warm: 30 })), ...(await sessionsBench({ loads: quick ? 3 : 10 }))];
const scale = await scaleBench({ lists: quick ? 5 : 20 });
rows.push(...scale.rows);
const prefix = await prefixBench();
rows.push(...prefix.rows);
const compaction = await compactionBench();
rows.push(...compaction.rows);
const lag = await loopLagBench();
rows.push(...lag.rows);
const streaming = await streamingBench({ runs: quick ? 3 : 10 });
rows.push(...streaming.rows);
const sandbox = await sandboxBench({ pairs: quick ? 20 : 100 });
rows.push(...sandbox.rows);
const growth = await growthBench({ quick });
process.stdout.write(`Reasonix ACP benchmarks — node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"})\n\n`);
process.stdout.write(`${table(rows)}\n`);
process.stdout.write(`\nPrefix stability: ${prefix.detail}\n`);
process.stdout.write(`\nCompaction: ${compaction.detail}\n`);
process.stdout.write(`\nEvent-loop lag: ${lag.detail}\n`);
process.stdout.write(`\nFifty sessions streaming: ${streaming.detail}\n`);
process.stdout.write(`\nList and inbox: ${scale.detail}\n`);
process.stdout.write(`\nCommand sandbox: ${sandbox.detail}\n`);
process.stdout.write(`\nGrowth (issue 25):\n${growth.table}\n${growth.detail}\n`);
