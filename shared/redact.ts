/**
 * Errors from a provider can echo what we sent, headers included. Everything that leaves the
 * daemon as an error message passes through here first.
 */
export function redact(text: string, secrets: Iterable<string | undefined> = []): string {
  let out = text;
  for (const s of secrets) {
    if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  }
  return out
    .replace(/\b(sk|pk|rk)-[A-Za-z0-9_-]{6,}/g, "[redacted]")
    .replace(/(Bearer\s+)[^\s"',]+/gi, "$1[redacted]")
    .replace(/("?(?:api[_-]?key|authorization|token|secret)"?\s*[:=]\s*"?)[^\s"',}]+/gi, "$1[redacted]");
}

/** One sentence: first line, bounded. */
export function oneSentence(text: string, max = 300): string {
  const line =
    text
      .split("\n")
      .find((l) => l.trim().length > 0)
      ?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
