/**
 * A bound on waiting for I/O. A process starved past the bound (a long synchronous stretch, a
 * machine with more work than cores) runs its timers before it reads what came meanwhile, so a
 * verdict taken in the timer calls an answer already in its socket missing: seen under two suites'
 * load as a handshake's 101 and as an editor's answer. The verdict runs once `ms` have passed and
 * the reads of the turn the timer fires in are done; it re-checks whether the answer came.
 * The returned timer can be cleared, unref'd and refreshed as any other.
 */
export function afterBound(ms: number, verdict: () => void): NodeJS.Timeout {
  return setTimeout(() => setImmediate(verdict), ms);
}
