/**
 * The configuration as it is now: `reasonix setup` (or the user) may change config.json under a
 * running daemon, and new sessions and turns see the change. A turn asks for the configuration a
 * dozen times and a stat each was a tenth of a turn start's CPU, so the file is checked once per
 * turn of the event loop, which no client can tell from every call. A change that does not parse
 * is logged and ignored; the last good configuration stays.
 */
import { statSync } from "node:fs";
import type { Logger } from "../log/log.js";
import { readConfigFile, resolveConfig, type DaemonConfig } from "./config.js";

function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}`;
  } catch {
    return "none";
  }
}

export function liveConfig(file: string, initial: DaemonConfig, env: NodeJS.ProcessEnv, log: Logger): () => DaemonConfig {
  let config = initial;
  let stamp = fileStamp(file);
  let checked = false;
  const recheck = (): void => {
    checked = false;
  };
  return () => {
    if (checked) return config;
    checked = true;
    setImmediate(recheck);
    const now = fileStamp(file);
    if (now !== stamp) {
      stamp = now;
      try {
        config = resolveConfig(readConfigFile(file), env);
        log.info("configuration reloaded");
      } catch (err) {
        log.warn({ err }, "configuration change ignored");
      }
    }
    return config;
  };
}
