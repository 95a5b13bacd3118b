import { renameSync, rmSync, statSync } from "node:fs";
import { pino, type Logger } from "pino";
import { redact } from "../../shared/redact.js";

type Destination = ReturnType<typeof pino.destination>;

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

/** What a logged error keeps beside its type, message and stack: what names an OS or HTTP fault. */
const ERROR_FIELDS = ["code", "errno", "syscall", "status", "reason", "signal", "exitCode"] as const;
const MAX_NON_ERROR_CHARS = 2000;

/**
 * The `err` of a log line: pino's standard serializer (type, message and stack, each with its
 * causes' appended), then only the fields above, every text through `redact`. An error can carry
 * what was sent or received (the openai SDK's `headers` and `error` body, a request's options):
 * those fields are never copied, and a key a provider echoed in a message is blanked.
 */
export function serializeError(err: unknown): unknown {
  if (err === undefined || err === null) return err;
  const full = pino.stdSerializers.err(err as Error) as unknown;
  if (full === err || typeof full !== "object" || full === null) {
    let text: string;
    try {
      text = typeof err === "string" ? err : (JSON.stringify(err) ?? String(err));
    } catch {
      text = String(err);
    }
    return redact(text.length > MAX_NON_ERROR_CHARS ? `${text.slice(0, MAX_NON_ERROR_CHARS)}…` : text);
  }
  const f = full as Record<string, unknown>;
  const out: Record<string, unknown> = { type: f.type, message: redact(String(f.message ?? "")) };
  if (typeof f.stack === "string") out.stack = redact(f.stack);
  for (const key of ERROR_FIELDS) {
    const v = f[key];
    if (typeof v === "number" || typeof v === "boolean") out[key] = v;
    else if (typeof v === "string") out[key] = redact(v);
  }
  if (Array.isArray(f.aggregateErrors)) out.aggregateErrors = (f.aggregateErrors as Array<{ raw?: unknown }>).map((e) => serializeError(e.raw ?? e));
  return out;
}

const closers = new WeakMap<Logger, () => Promise<void>>();

/** Size-based rotation: `daemon.log` → `daemon.log.1` → … → `daemon.log.<keep>`, the oldest dropped. */
export interface Rotation {
  maxBytes: number;
  keep: number;
}

export const DEFAULT_ROTATION: Rotation = { maxBytes: 10 * 1024 * 1024, keep: 5 };

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Shifts the rotated files one place up, dropping the oldest, and moves the live file to `.1`. */
function shift(logFile: string, keep: number): void {
  rmSync(`${logFile}.${keep}`, { force: true });
  for (let i = keep - 1; i >= 1; i--) {
    try {
      renameSync(`${logFile}.${i}`, `${logFile}.${i + 1}`);
    } catch {
      // that one does not exist yet
    }
  }
  renameSync(logFile, `${logFile}.1`);
}

const rotations = new WeakMap<Logger, (rotation: Rotation) => void>();

/**
 * The daemon's log: pino into `logFile` through sonic-boom, rotated by size in this process (no
 * transport thread to start, nothing outside the daemon to configure). Without a file, stderr.
 */
export function createLogger(logFile: string | undefined, level = process.env.REASONIX_LOG_LEVEL ?? "info", rotation: Rotation = DEFAULT_ROTATION): Logger {
  // A full disk must cost log lines, not the daemon: an unhandled 'error' here would end the process.
  let reported = false;
  const onError = (err: Error): void => {
    if (reported) return;
    reported = true;
    try {
      process.stderr.write(`reasonix daemon: cannot write the log: ${err.message}\n`);
    } catch {
      // stderr is the same full disk
    }
  };
  const open = (): Destination => {
    const d = logFile ? pino.destination({ dest: logFile, mkdir: true, sync: false }) : pino.destination(2);
    d.on("error", onError);
    return d;
  };
  /** Resolves when a destination has written out what it holds and closed its file. */
  const finish = (d: Destination): Promise<void> =>
    new Promise<void>((resolve) => {
      d.once("close", () => resolve());
      d.once("error", () => resolve());
      d.end();
    });
  let dest = open();
  const retiring = new Set<Promise<void>>();
  let limits = rotation;
  let size = logFile ? fileSize(logFile) : 0;
  const rotate = (): void => {
    // Not open yet: the lines are still buffered for this path; rotate at a later write.
    if (!logFile || (dest as unknown as { fd: number }).fd < 0) return;
    try {
      shift(logFile, limits.keep);
    } catch (err) {
      // A log that cannot rotate keeps growing rather than losing lines or stopping the daemon.
      size = 0;
      onError(err as Error);
      return;
    }
    // The old destination keeps its (renamed) file until what it holds is written; new lines go to
    // a new daemon.log.
    const old = dest;
    dest = open();
    size = 0;
    const done = finish(old);
    retiring.add(done);
    void done.then(() => retiring.delete(done));
  };
  // A daemon closed inside a longer-lived process (tests) may still hear from a late callback; once
  // the file is closed such lines are dropped instead of throwing "SonicBoom destroyed" at the caller.
  let closed = false;
  const sink = {
    write: (line: string): boolean => {
      if (closed) return true;
      size += Buffer.byteLength(line);
      const ok = dest.write(line);
      if (logFile && size >= limits.maxBytes) rotate();
      return ok;
    },
    flush: (cb?: (err?: Error) => void): void => (closed ? cb?.() : dest.flush(cb)),
  };
  const logger = pino({ level, base: { pid: process.pid }, serializers: { err: serializeError }, redact: { paths: REDACT, censor: "[redacted]" } }, sink);
  rotations.set(logger, (next) => {
    limits = next;
  });
  readiness.set(
    logger,
    () =>
      new Promise<void>((resolve) => {
        const current = dest;
        if ((current as unknown as { fd: number }).fd >= 0) resolve();
        else current.once("ready", () => resolve());
      }),
  );
  closers.set(logger, async () => {
    if (closed) return;
    closed = true;
    if (logFile) await Promise.all([finish(dest), ...retiring]);
  });
  return logger;
}

const readiness = new WeakMap<Logger, () => Promise<void>>();

/** Resolves once the log's current file is open (after a rotation, the new one). */
export function logOpened(logger: Logger): Promise<void> {
  return readiness.get(logger)?.() ?? Promise.resolve();
}

/** New rotation limits for a logger (config.json is read after the log opens). */
export function setRotation(logger: Logger, rotation: Rotation): void {
  rotations.get(logger)?.(rotation);
}

/** Writes out what is buffered and closes the log file; later lines are dropped. */
export function closeLogger(logger: Logger): Promise<void> {
  return closers.get(logger)?.() ?? Promise.resolve();
}
