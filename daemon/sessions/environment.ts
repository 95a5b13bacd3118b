/**
 * What a session's commands, stdio MCP servers and plugin actions inherit: the environment of the
 * window that created the session, recorded once, minus secrets. The daemon's own environment (that
 * of whichever editor happened to start it) never reaches a tool, and a window attaching later
 * never changes another window's session. The same for the umask its commands and the files its
 * tools create get (tools/umask.ts).
 */
import { looksSecret } from "../../shared/environment.js";
import { DEFAULT_UMASK } from "../tools/umask.js";
import type { ClientPort, SessionRecord } from "./types.js";

export { looksSecret };

export interface EnvironmentPolicy {
  /** Glob patterns (`*`, `?`) of names kept even though they look like secrets. */
  include?: string[] | undefined;
  /** Glob patterns of names always left out; wins over `include`. */
  exclude?: string[] | undefined;
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "i");
}

export function filterEnvironment(env: Readonly<Record<string, string | undefined>>, policy: EnvironmentPolicy = {}): Record<string, string> {
  const include = (policy.include ?? []).map(globToRegExp);
  const exclude = (policy.exclude ?? []).map(globToRegExp);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (exclude.some((re) => re.test(name))) continue;
    if (looksSecret(name) && !include.some((re) => re.test(name))) continue;
    out[name] = value;
  }
  return out;
}

/** The umask of the session's commands and created files: its creating window's, else the default. */
export function sessionUmask(record: Pick<SessionRecord, "umask">): number {
  return record.umask ?? DEFAULT_UMASK;
}

/**
 * What a window that attaches (load, resume) offers a session: its environment minus secrets and
 * its umask. They fill only what the session lacks (`SessionState.fillWindowFacts`): a session
 * recorded before it kept them, or made by a client that did not say.
 */
export function windowFacts(port: Pick<ClientPort, "env" | "umask">, policy: EnvironmentPolicy | undefined): Pick<SessionRecord, "environment" | "umask"> {
  return { environment: filterEnvironment(port.env, policy), umask: port.umask };
}
