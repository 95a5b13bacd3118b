/**
 * What a session's commands, stdio MCP servers and plugin actions inherit: the environment of the
 * window that created the session, recorded once, minus secrets. The daemon's own environment (that
 * of whichever editor happened to start it) never reaches a tool, and a window attaching later
 * never changes another window's session.
 */
import { looksSecret } from "../../shared/environment.js";

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
