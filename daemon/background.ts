/**
 * Start-up must not grow with history: work that reads every stored session (turns a dead daemon
 * left running, the integrity scan) waits until the daemon has served its first requests, then
 * reads the store a page at a time with pauses between, so it never runs in front of a window.
 */
import type { Store } from "./store/store.js";
import { scanStore } from "./store/integrity.js";
import type { SessionManager } from "./sessions/index.js";
import type { DaemonState } from "./server/state.js";

/** Work that reads every stored session; it never runs in front of the windows' requests. */
export interface Background {
  /** Stops at the next page; settles once nothing more runs. */
  stop(): Promise<void>;
}

/** Start-up must not grow with history: what reads every session waits this long after serving begins. */
const BACKGROUND_DELAY_MS = 1000;
/** …and then pauses this long after each page of 256 sessions, leaving the event loop to the windows. */
const BACKGROUND_PAUSE_MS = 10;

/**
 * Turns a dead daemon left running are marked interrupted (a load marks them too, so a window that
 * comes first loses nothing), then the integrity scan looks for what LevelDB dropped in silence:
 * holes in the ledgers. Both read the store a page at a time once the first requests are served.
 */
export function afterFirstRequests(state: DaemonState, sessions: SessionManager, store: Store): Background {
  const { log } = state.services;
  let stopping = false;
  const going = (): boolean => !stopping && !state.draining;
  const between = (): Promise<boolean> => new Promise((resolve) => setTimeout(() => resolve(going()), BACKGROUND_PAUSE_MS).unref());
  let timer: NodeJS.Timeout | undefined;
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  const run = async (): Promise<void> => {
    timer = undefined;
    try {
      const marked = await sessions.recoverInterrupted(between);
      if (marked > 0) log.info({ marked }, "marked interrupted turns");
      if (!going()) return;
      log.info(await scanStore(store, { between, beingMade: (id) => sessions.isBeingMade(id) }), "store integrity scan done");
    } catch (err) {
      if (going()) log.error({ err }, "store integrity scan failed");
    } finally {
      settle();
    }
  };
  timer = setTimeout(() => void run(), BACKGROUND_DELAY_MS);
  timer.unref();
  return {
    stop() {
      stopping = true;
      if (timer) {
        clearTimeout(timer);
        settle();
      }
      return done;
    },
  };
}
