import type { AcpServices } from "../acp/context.js";
import type { Store } from "../store/store.js";
import type { SandboxStatus } from "../tools/sandbox-probe.js";

/** What the HTTP plugins read and the daemon's life cycle writes. */
export interface DaemonState {
  services: AcpServices;
  store: Store;
  startedAt: number;
  build: string;
  draining: boolean;
  connections: number;
  /** How far behind a window may fall before it is dropped (acp-ws.ts). */
  windowBacklogBytes: number;
  /** No turn running or waiting, no question pending: safe to stop or to hand over to a new build. */
  idle(): boolean;
  /** The environment of a window that sent none (a plain ACP client): where programs are, the locale. */
  plainWindowEnv: Record<string, string>;
  /** Whether commands run sandboxed on this machine, and why not when they don't. */
  sandbox(): Promise<SandboxStatus>;
  /** grep and glob threads this daemon runs now. */
  searchThreads(): number;
  /** Asks the daemon to stop cleanly (admin route, signals, idle timer). */
  requestShutdown(reason: string): void;
}
