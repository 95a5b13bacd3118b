import { pino, type Logger } from "pino";

/**
 * Paths pino blanks out wherever they appear in a logged object: keys and header values never reach
 * the log file, whatever a caller passes by mistake.
 */
const REDACT = [
  "apiKey",
  "*.apiKey",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "env",
  "*.env",
  "token",
  "*.token",
];

export type { Logger };

const closers = new WeakMap<Logger, () => Promise<void>>();

export function createLogger(logFile: string | undefined, level = process.env.REASONIX_LOG_LEVEL ?? "info"): Logger {
  const dest = logFile ? pino.destination({ dest: logFile, mkdir: true, sync: false }) : pino.destination(2);
  // A full disk must cost log lines, not the daemon: an unhandled 'error' here would end the process.
  let reported = false;
  dest.on("error", (err: Error) => {
    if (reported) return;
    reported = true;
    try {
      process.stderr.write(`reasonix daemon: cannot write the log: ${err.message}\n`);
    } catch {
      // stderr is the same full disk
    }
  });
  // A daemon closed inside a longer-lived process (tests) may still hear from a late callback; once
  // the file is closed such lines are dropped instead of throwing "SonicBoom destroyed" at the caller.
  let closed = false;
  const sink = {
    write: (line: string): boolean => (closed ? true : dest.write(line)),
    flush: (cb?: (err?: Error) => void): void => (closed ? cb?.() : dest.flush(cb)),
  };
  const logger = pino({ level, base: { pid: process.pid }, redact: { paths: REDACT, censor: "[redacted]" } }, sink);
  closers.set(logger, () => {
    if (closed) return Promise.resolve();
    closed = true;
    if (!logFile) return Promise.resolve();
    return new Promise<void>((resolve) => {
      dest.once("close", () => resolve());
      dest.once("error", () => resolve());
      dest.end();
    });
  });
  return logger;
}

/** Writes out what is buffered and closes the log file; later lines are dropped. */
export function closeLogger(logger: Logger): Promise<void> {
  return closers.get(logger)?.() ?? Promise.resolve();
}
