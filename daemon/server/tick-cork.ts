/**
 * Coalesces a socket's writes: frames sent while the socket is corked leave together in one
 * `writev` instead of one syscall each. Streaming, a window gets a frame per model chunk, and a
 * syscall per frame was the daemon's largest single cost with 50 sessions streaming (about a third
 * of its CPU). The first write after a quiet spell leaves at the end of the current turn of the
 * event loop; while frames keep coming, the socket is flushed at most every `spacingMs`, so a
 * window costs a few hundred syscalls a second however many chunks it receives, and a chunk waits
 * at most that long. Corking only delays: it never reorders or drops.
 *
 * A window that is busy (its last flush carried BUSY_FRAMES frames or more) is flushed at most
 * every `busySpacingMs` instead: each flush wakes the shim and then the editor, and on two cores
 * those wake-ups, not the bytes, were the cost. With 50 sessions streaming, three interleaved runs
 * each (docs/benchmarks.md): socket writes 2,870–3,170 → 1,190–1,230, the five shims 0.33–0.35 →
 * 0.21–0.28 s of CPU, the daemon 67–73 → 62–68 µs per chunk, the median chunk 3–4 ms later. One
 * session streaming at a model's usual pace sends a frame or two per flush and keeps the short
 * spacing, so its first chunk is not held (an 8 ms spacing for every window held it by 5 ms).
 */
import type { Writable } from "node:stream";

export const CORK_SPACING_MS = 2;
export const BUSY_SPACING_MS = 8;
export const BUSY_FRAMES = 4;
/**
 * Held bytes that flush at once, whatever the spacing: a window is judged fallen behind by what its
 * socket buffers (`windowBacklogBytes`, 64 KiB at the least), and what the cork holds is not that.
 */
export const MAX_HELD_BYTES = 32 * 1024;

/**
 * Returns the function to call before each write. `prompt`: the write is an answer or a question
 * someone waits for, so the socket is flushed at the end of this event-loop turn whatever the
 * spacing (a client sending requests one after another must not wait up to `spacingMs` for each).
 */
export function tickCork(socket: Writable, spacingMs = CORK_SPACING_MS, busySpacingMs = BUSY_SPACING_MS): (prompt?: boolean) => void {
  let corked = false;
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  let lastFlush = Number.NEGATIVE_INFINITY;
  let frames = 0;
  let spacing = spacingMs;
  // Whichever way a flush comes (timer, end of turn, the held-bytes bound), the others are cancelled.
  const release = (): void => {
    clearTimeout(timer);
    clearImmediate(immediate);
    timer = undefined;
    immediate = undefined;
    corked = false;
    lastFlush = performance.now();
    spacing = frames >= BUSY_FRAMES ? busySpacingMs : spacingMs;
    frames = 0;
    while (socket.writableCorked > 0) socket.uncork();
  };
  // setImmediate runs after this poll phase: every model chunk read in it has been sent by then.
  const releaseSoon = (): void => {
    clearTimeout(timer);
    timer = undefined;
    immediate ??= setImmediate(release);
  };
  return (prompt = false) => {
    if (socket.destroyed) return;
    if (corked && socket.writableLength >= MAX_HELD_BYTES) release();
    frames++;
    if (corked) {
      if (prompt) releaseSoon();
      return;
    }
    corked = true;
    socket.cork();
    const wait = prompt ? 0 : lastFlush + spacing - performance.now();
    if (wait <= 0) releaseSoon();
    else {
      timer = setTimeout(release, wait);
      // The socket keeps the process alive while it is open; a flush pending on it need not.
      timer.unref();
    }
  };
}
