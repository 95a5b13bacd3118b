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
  return pino({ level, base: { pid: process.pid }, redact: { paths: REDACT, censor: "[redacted]" } }, dest);
}
