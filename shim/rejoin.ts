/**
 * Waiting for a daemon to come back after the shim lost it (a supervisor restarting it). A restart
 * is a restart delay (the shipped unit's `RestartSec=2`) and then a start, which on a busy machine
 * takes seconds by itself (3 to 6 s measured at a load of 12 to 19 on 2 cores, most of it loading
 * the daemon's modules). So the wait is in two parts: a short window for a restart to show itself
 * (a daemon answering, or one of this store seen starting: `DaemonLink.starting`), and then the
 * same budget a cold start gets for a daemon that is visibly starting.
 */
import { type DaemonLink, type ShimSocket, START_BUDGET_MS } from "./connect.js";

/** How long after the loss a restart has to show itself. */
export const RECONNECT_WINDOW_MS = 3000;
const POLL_MS = 200;

/**
 * A window on a daemon that comes back: one that answers within the window, or one seen starting
 * within it, for as long as the start budget from when it was first seen while it is still starting.
 * Undefined when none came, or when `stop()` says the editor has left meanwhile.
 */
export async function rejoin(link: Pick<DaemonLink, "open" | "starting">, stop: () => boolean): Promise<ShimSocket | undefined> {
  const windowEnds = Date.now() + RECONNECT_WINDOW_MS;
  let budgetEnds: number | undefined;
  while (!stop()) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    try {
      return await link.open(false);
    } catch {
      // not back yet
    }
    const now = Date.now();
    const starting = link.starting?.() === true;
    if (starting) budgetEnds ??= now + START_BUDGET_MS;
    if (now >= windowEnds && !(starting && budgetEnds !== undefined && now < budgetEnds)) return undefined;
  }
  return undefined;
}
