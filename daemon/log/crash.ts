/**
 * An uncaught error ends the daemon; its stack must outlive it somewhere the user finds, whether
 * the daemon's stderr is a file (started by a shim), the journal (systemd) or nothing. Written
 * synchronously: the process is about to end, and the async log may never flush.
 */
import { appendFileSync } from "node:fs";
import { redact } from "../../shared/redact.js";

export function crashEntry(err: unknown, kind: string): string {
  const stack = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  return `${new Date().toISOString()} pid ${process.pid} ${kind}: ${redact(stack)}\n`;
}

export function recordCrashes(crashFile: string): void {
  process.on("uncaughtException", (err, origin) => {
    const entry = crashEntry(err, origin === "unhandledRejection" ? "unhandled rejection" : "uncaught exception");
    try {
      appendFileSync(crashFile, entry, { mode: 0o600 });
    } catch {
      // the folder is gone or the disk is full: stderr is all that is left
    }
    try {
      process.stderr.write(`reasonix daemon: crashed; the stack is in ${crashFile}\n${entry}`);
    } catch {
      // nothing more to do
    }
    process.exit(70);
  });
}
