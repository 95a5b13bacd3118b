/**
 * Whether delivery keeps pace with the model: from the model's write time and the window's receipt
 * time of every chunk. The model's own pace on a loaded two-core machine is not the nominal one
 * (its 5 ms timers fire late while fifty streams, five shims and the daemon share the cores), so
 * "delivered at the rate the model sends" is judged against what it actually sent: the rate over
 * the span of its writes beside the rate over the span of the deliveries, and each chunk's delay
 * from write to window, which grows through the run when delivery falls behind.
 */
import { quantileOf } from "./stats.js";

export interface Pacing {
  /** chunks per second over the span from the model's first write to its last */
  sentRate: number;
  /** chunks per second over the span from the first delivery to the last */
  deliveredRate: number;
  /** the slowest session's delivery rate as a share of the model's rate for it */
  worstSessionShare: number;
  /** milliseconds from the model's write to the window, for every chunk (sorted) */
  delays: number[];
  /** median of each session's delay over its last quarter of chunks minus its first quarter: a backlog shows as growth */
  delayGrowth: number;
  /** the model's median gap between two chunks of one session, in milliseconds */
  sentGap: number;
  /** chunks written and received (pairs with both times) */
  pairs: number;
}

const span = (first: number, last: number, n: number): number => (last > first ? (n - 1) / ((last - first) / 1000) : NaN);

export function pacing(sent: number[][], got: number[][]): Pacing {
  const delays: number[] = [];
  const gaps: number[] = [];
  const growth: number[] = [];
  const shares: number[] = [];
  let firstSent = Infinity;
  let lastSent = -Infinity;
  let firstGot = Infinity;
  let lastGot = -Infinity;
  let pairs = 0;
  sent.forEach((times, k) => {
    const arrived = got[k] ?? [];
    const own: number[] = [];
    for (let i = 0; i < times.length; i++) {
      if (i > 0) gaps.push(times[i]! - times[i - 1]!);
      const at = arrived[i];
      if (at === undefined) continue;
      own.push(at - times[i]!);
      pairs++;
    }
    if (times.length === 0 || own.length !== times.length) return;
    delays.push(...own);
    firstSent = Math.min(firstSent, times[0]!);
    lastSent = Math.max(lastSent, times.at(-1)!);
    firstGot = Math.min(firstGot, arrived[0]!);
    lastGot = Math.max(lastGot, arrived[times.length - 1]!);
    const quarter = Math.max(1, Math.floor(own.length / 4));
    growth.push(quantileOf(own.slice(-quarter), 0.5) - quantileOf(own.slice(0, quarter), 0.5));
    shares.push(span(arrived[0]!, arrived[times.length - 1]!, times.length) / span(times[0]!, times.at(-1)!, times.length));
  });
  const total = delays.length;
  return {
    sentRate: total / ((lastSent - firstSent) / 1000),
    deliveredRate: total / ((lastGot - firstGot) / 1000),
    worstSessionShare: shares.length === 0 ? NaN : Math.min(...shares),
    delays: delays.sort((a, b) => a - b),
    delayGrowth: quantileOf(growth, 0.5),
    sentGap: quantileOf(gaps, 0.5),
    pairs,
  };
}
