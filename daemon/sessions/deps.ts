/** What a session needs from the daemon around it (the manager builds it once for all sessions). */
import type { Store } from "../store/store.js";
import type { Logger } from "../log/log.js";
import type { DaemonConfig } from "../config/config.js";
import type { ChatModel } from "../provider/types.js";
import type { GoalBounds } from "../agent/goal.js";
import type { SandboxStatus } from "../tools/sandbox-probe.js";
import type { DaemonTools } from "../tools/types.js";

export interface SessionDeps {
  store: Store;
  log: Logger;
  config(): DaemonConfig;
  /** Where user-level custom commands live (`<config>/commands`). */
  configDir: string;
  maxSteps(): number;
  permissionTimeoutMs(): number;
  goalBounds(): GoalBounds;
  /** Builds the model for a reference; throws RpcError -32000 when no key is configured. */
  createModel(ref: string, env: Readonly<Record<string, string | undefined>>, effort: string): ChatModel;
  listSessions(cwd: string): Promise<Array<{ sessionId: string; title?: string; updatedAt: string }>>;
  /** Whether commands can be sandboxed here (probed once per daemon). */
  sandbox(): Promise<SandboxStatus>;
  /** The daemon's own folders (config, state, runtime, socket): absent inside the sandbox. */
  hiddenDirs: readonly string[];
  /** Where sessions' private /tmp folders are made (inside the state folder; emptied at each start). */
  sandboxTmp: string;
  /** The editor bound and search threads every session's tools share (this daemon's, not the process's). */
  tools: DaemonTools;
}
