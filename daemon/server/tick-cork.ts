/**
 * Coalesces a socket's writes: frames sent while the socket is corked leave together in one
 * `writev` instead of one syscall each. Streaming, a window gets a frame per model chunk, and a
 * syscall per frame was the daemon's largest single cost with 50 sessions streaming (about a third
 * of its CPU). The first write after a quiet spell leaves at the end of the current turn of the
 * event loop; while frames keep coming, the socket is flushed at most every `spacingMs`, so a busy
 * window costs a few hundred syscalls a second however many chunks it receives, and a chunk waits
 * at most `spacingMs`. Corking only delays: it never reorders or drops.
 *
 * 8 ms rather than 2: each flush wakes the shim and then the editor, and on two cores those
 * wake-ups, not the bytes, were the cost. With 50 sessions streaming, three interleaved runs each
 * (docs/benchmarks.md): 2,480–2,640 socket writes → 1,080–1,140, daemon 82–89 → 73–74 µs of CPU per
 * chunk, the five shims 0.39–0.44 → 0.27–0.31 s, the median chunk 3 ms later. 8 ms stays under
 * half of a 60 Hz frame, a chunk after a quiet spell still leaves at once, and answers never wait.
 */
import type { Writable } from "node:stream";

export const CORK_SPACING_MS = 8;

/**
 * Returns the function to call before each write. `prompt`: the write is an answer or a question
 * someone waits for, so the socket is flushed at the end of this event-loop turn whatever the
 * spacing (a client sending requests one after another must not wait up to `spacingMs` for each).
 */
export function tickCork(socket: Writable, spacingMs = CORK_SPACING_MS): (prompt?: boolean) => void {
  let corked = false;
  let soon = false;
  let timer: NodeJS.Timeout | undefined;
  let lastFlush = Number.NEGATIVE_INFINITY;
  const release = (): void => {
    clearTimeout(timer);
    timer = undefined;
    corked = false;
    soon = false;
    lastFlush = performance.now();
    while (socket.writableCorked > 0) socket.uncork();
  };
  // setImmediate runs after this poll phase: every model chunk read in it has been sent by then.
  const releaseSoon = (): void => {
    clearTimeout(timer);
    timer = undefined;
    soon = true;
    setImmediate(release);
  };
  return (prompt = false) => {
    if (socket.destroyed) return;
    if (corked) {
      if (prompt && !soon) releaseSoon();
      return;
    }
    corked = true;
    socket.cork();
    const wait = prompt ? 0 : lastFlush + spacingMs - performance.now();
    if (wait <= 0) releaseSoon();
    else timer = setTimeout(release, wait);
  };
}
