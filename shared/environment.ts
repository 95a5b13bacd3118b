/**
 * Environments that cross a trust line. The daemon serves every window of this user for weeks, and
 * whatever its process environment holds is readable in /proc/<pid>/environ by anything running as
 * the user outside a sandbox. So the daemon starts with only what it needs to run; each window
 * sends its own environment over the socket, and the provider keys in it stay in the daemon's
 * memory. Used by the shim (what a daemon it starts gets) and by the daemon (what a session's
 * tools may inherit).
 */

const SECRET_WORDS = /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i;
/** Our own settings whose names hold such a word but no secret: left out, the override never reached a daemon a shim started. */
const NOT_SECRET = new Set(["REASONIX_BUDGET_TOKENS"]);

/** A name that usually carries a credential (API keys, tokens, passwords). */
export function looksSecret(name: string): boolean {
  return SECRET_WORDS.test(name) && !NOT_SECRET.has(name);
}

/** What a daemon needs of its starter's environment: where things are, the locale, the trust store. */
const KEPT = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  // A corporate proxy's certificate, without which the provider is unreachable.
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "DEEPSEEK_BASE_URL",
]);
const KEPT_PREFIXES = ["LC_", "XDG_", "REASONIX_"];

/** Where programs are and the locale: what a window that sent no environment gets for its commands. */
const BASIC = new Set(["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ"]);

export function basicEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !looksSecret(name) && (BASIC.has(name) || name.startsWith("LC_"))) out[name] = value;
  }
  return out;
}

/** The environment a daemon process is started with: the kept names, never a secret-looking one. */
export function daemonEnvironment(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || looksSecret(name)) continue;
    if (KEPT.has(name) || KEPT_PREFIXES.some((p) => name.startsWith(p))) out[name] = value;
  }
  return out;
}
