import type { Paths } from "../../shared/paths.js";
import type { DaemonConfig } from "../config/config.js";
import type { Logger } from "../log/log.js";
import type { SessionManager } from "../sessions/manager.js";

/** The daemon services every ACP handler may use. */
export interface AcpServices {
  sessions: SessionManager;
  config(): DaemonConfig;
  paths: Paths;
  log: Logger;
  version: string;
}
