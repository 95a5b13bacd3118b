/**
 * How busy this machine is, for the few tests whose fault bounds must hold on a loaded one (test
 * concurrency 8, other work beside the suite). A task waits for a CPU about in proportion to the
 * run queue per CPU; a search thread, which runs at a low priority, waits about a tenth of a
 * second for each task ahead of it. A bound that the test means as "no progress for this long" is
 * scaled by this factor, so a wait for a CPU is not read as a stall; what the test checks stays the same.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";

/** Tasks per CPU, at least 1: the larger of the 1-minute load average and the tasks runnable now (Linux). */
export function busyFactor(): number {
  let now = 0;
  try {
    // "0.52 0.58 0.59 3/612 12345": the fourth field is runnable/total, the reader included.
    now = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[3]?.split("/")[0]) - 1 || 0;
  } catch {
    // Not Linux: the load average alone.
  }
  return Math.max(1, Math.max(loadavg()[0]!, now) / availableParallelism());
}

/** `ms` scaled by `busyFactor()`, in whole milliseconds. */
export function busyBound(ms: number): number {
  return Math.round(ms * busyFactor());
}
