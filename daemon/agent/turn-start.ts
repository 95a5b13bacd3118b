/**
 * Turn starts take turns on the event loop. Once a prompt is on disk its turn runs, in microtasks,
 * everything up to the model request being sent (status snapshot, the request's body and headers,
 * the connection). Fifty prompts synced by one store write resolve together, and their fifty turn
 * starts then held the loop for about 80 ms in one piece: health checks and the streams already
 * running waited behind them. Each start now gets an event-loop turn of its own, in the order the
 * prompts were synced, so the loop polls for I/O between them.
 */
let last: Promise<void> = Promise.resolve();

/** Resolves in an event-loop turn of its own, after every start asked for before it. */
export function turnStartSlot(): Promise<void> {
  const slot = last.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
  last = slot;
  return slot;
}
