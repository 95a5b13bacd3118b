import type { Paths } from "../../shared/paths.js";
import type { DaemonConfig } from "../config/config.js";
import type { Logger } from "../log/log.js";
import type { SessionManager } from "../sessions/index.js";
import type { ClientCapabilities } from "../../shared/acp-schemas.js";
import type { ClientCaps, ClientPort } from "../sessions/index.js";

/** The daemon services every ACP handler may use. */
export interface AcpServices {
  sessions: SessionManager;
  config(): DaemonConfig;
  paths: Paths;
  log: Logger;
  version: string;
}

/** What the shim told the daemon about its window at the upgrade. */
export interface ConnectionInfo {
  env: Record<string, string | undefined>;
  /** The window's umask (HEADER_UMASK); undefined when the client did not say. */
  umask?: number | undefined;
  model: string | undefined;
  shimPid: number | undefined;
}

/**
 * One editor window as the method handlers see it: the port sessions reach it through, plus what
 * initialize negotiated. Handlers depend on this, not on the connection class that implements it,
 * so the method table and the connection do not import each other.
 */
export interface AcpWindow extends ClientPort {
  readonly services: AcpServices;
  readonly info: ConnectionInfo;
  readonly log: Logger;
  capabilities: ClientCaps;
  clientCapabilities: ClientCapabilities | undefined;
  lastActive: number;
}
