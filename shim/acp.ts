/**
 * `reasonix acp`: a dumb pipe between the editor's stdio and the daemon's /acp WebSocket, plus the
 * little it must know to never leave the editor hanging: which editor requests are still unanswered.
 * Stdout carries ACP lines only; everything else goes to stderr.
 */
import type { UnixWebSocket } from "./ws-client.js";
import { idFromHead, LineReader, MAX_LINE_BYTES } from "../shared/ndjson.js";
import { ErrorCode, ExactId, type JsonRpcId } from "../shared/jsonrpc.js";
import { resolvePaths } from "../shared/paths.js";
import { parseFlags, reportUsage, type UsageError } from "../shared/cli.js";
import { connectOrStart, DaemonUnavailableError, readDaemonInfo, takeUmask } from "./connect.js";
import { rejoinDaemon } from "./rejoin.js";
import { exactId, PRIVATE_ID_PREFIX, ShimMemory } from "./memory.js";
import { isRunning } from "./daemon-process.js";
import { errorText } from "../shared/error-text.js";

interface Source {
  pause(): void;
  resume(): void;
}

const NEWLINE = Buffer.from("\n");
const ANSWER_HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const PRIVATE_HEAD = Buffer.from(`{"jsonrpc":"2.0","id":"${PRIVATE_ID_PREFIX}`);
const startsWith = (data: Buffer, head: Buffer): boolean => data.length >= head.length && data.compare(head, 0, head.length, 0, head.length) === 0;
let out: Buffer[] = [];
let outSource: Source | undefined;
let paused = false;
/** The editor closed our stdout: nothing more is written. */
let stdoutGone = false;

/**
 * Queues one line for stdout. Lines that arrive together (one socket read holds many frames during a
 * replay) go out in one write, not one syscall each.
 */
function writeLine(line: string | Buffer, source?: Source): void {
  if (stdoutGone) return;
  out.push(typeof line === "string" ? Buffer.from(line) : line, NEWLINE);
  if (source) outSource = source;
  if (out.length === 2) queueMicrotask(flushOut);
}

/**
 * Writes what is queued; when the editor stops reading, stops reading the daemon too, so the daemon
 * sees the backlog (and drops a window that falls too far behind) instead of this process ballooning.
 */
function flushOut(): void {
  if (out.length === 0 || stdoutGone) return;
  const data = Buffer.concat(out);
  out = [];
  const source = outSource;
  if (!process.stdout.write(data) && source && !paused) {
    source.pause();
    paused = true;
    process.stdout.once("drain", () => {
      paused = false;
      source.resume();
    });
  }
}

function exit(code: number): never {
  flushOut();
  process.exit(code);
}

/** An answer of the shim's own; an id kept as its JSON text (ExactId) is written back as that text. */
function errorLine(id: JsonRpcId, code: number, message: string, data?: unknown): string {
  const error = JSON.stringify(data === undefined ? { code, message } : { code, message, data });
  return `{"jsonrpc":"2.0","id":${id instanceof ExactId ? id.text : JSON.stringify(id)},"error":${error}}`;
}

const STILL_RUNNING_MS = 500;

/** True when `pid` is still running `ms` from now; false as soon as it is gone. */
async function stillRunningAfter(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isRunning(pid)) {
    if (Date.now() >= deadline) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

export async function runAcp(args: string[]): Promise<void> {
  let model: string | undefined;
  try {
    model = parseFlags(args, { model: { type: "string" } }, "usage: reasonix acp [--model provider/model]\n").values.model;
  } catch (err) {
    reportUsage("acp", err as UsageError);
    exit(2);
  }
  const paths = resolvePaths();
  // The editor's umask goes with the window (a rejoin sends the same); our own files stay private.
  const umask = takeUmask();

  // Editor lines that arrive while we (re)connect wait here, in order.
  const early: string[] = [];
  let ws: UnixWebSocket | undefined;
  const memory = new ShimMemory();
  let stdinEnded = false;

  // Set when no daemon can be had: every request is answered with this, until stdin ends.
  let unavailable: { message: string; data: { reason: string; logPath: string } } | undefined;
  const refuse = (line: string): void => {
    let msg: { id?: JsonRpcId; method?: unknown };
    try {
      msg = JSON.parse(line) as { id?: JsonRpcId; method?: unknown };
    } catch {
      writeLine(errorLine(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON"));
      return;
    }
    // Notifications and the editor's answers are never answered.
    if (msg && typeof msg === "object" && typeof msg.method === "string" && msg.id !== undefined) {
      writeLine(errorLine(exactId(msg.id, line), ErrorCode.DaemonUnavailable, unavailable!.message, unavailable!.data));
    }
  };

  // While the daemon's socket buffer is full, stdin is not read: a daemon that stops reading must
  // not make this process buffer the editor's lines without limit.
  let stdinPaused = false;
  const resumeStdin = (): void => {
    if (!stdinPaused) return;
    stdinPaused = false;
    process.stdin.resume();
  };
  const send = (socket: UnixWebSocket, line: string): void => {
    if (socket.send(line) || stdinPaused) return;
    stdinPaused = true;
    process.stdin.pause();
    socket.once("drain", resumeStdin);
  };

  const forward = (line: string): void => {
    if (unavailable) {
      refuse(line);
      return;
    }
    memory.fromEditor(line);
    if (ws) send(ws, line);
    else early.push(line);
  };

  const reader = new LineReader({
    line: forward,
    oversize: (bytes, head) => {
      writeLine(
        errorLine(
          idFromHead(head),
          ErrorCode.InvalidRequest,
          `Message too large: a line of ${bytes} bytes exceeds the ${MAX_LINE_BYTES / (1024 * 1024)} MiB limit`,
        ),
      );
    },
  });

  process.stdin.on("data", (chunk: Buffer) => reader.push(chunk));
  /**
   * The editor closed stdin: the sessions stay in the daemon. Answers to quick requests already sent
   * (an initialize piped in with EOF right behind it) are still delivered; a running prompt is not
   * waited for, its turn goes on in the daemon. Then close politely so the daemon detaches us at once.
   */
  const finish = async (): Promise<void> => {
    const deadline = Date.now() + 2000;
    while (ws && memory.quickPending() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    if (ws) ws.close(1000, "editor closed stdin");
  };
  /**
   * The editor closed our stdout (EPIPE): it left, like closing stdin, but nothing can reach it any
   * more, so nothing is answered or waited for and nothing is said on stderr. The daemon is told
   * politely (its turns go on there); the socket is read again so its close completes.
   */
  process.stdout.on("error", () => {
    if (stdoutGone) return;
    stdoutGone = true;
    out = [];
    stdinEnded = true;
    process.stdin.pause();
    if (!ws) exit(0);
    ws.resume();
    ws.close(1000, "editor closed stdout");
    setTimeout(() => exit(0), 2000).unref();
  });
  process.stdin.on("end", () => {
    reader.end();
    stdinEnded = true;
    if (unavailable) exit(1);
    // Not connected yet: the lines wait in `early`, and attach() finishes once they are sent.
    if (ws) void finish();
  });

  let daemonPid: number | undefined;
  const attach = (socket: UnixWebSocket): void => {
    ws = socket;
    daemonPid = readDaemonInfo(paths)?.pid;
    // Frames pass through as bytes: most are notifications, decoded only to be encoded again.
    socket.on("bytes", (data) => {
      // The daemon writes "id" right after "jsonrpc", so only frames that start so can settle a request.
      if (startsWith(data, ANSWER_HEAD)) {
        if (startsWith(data, PRIVATE_HEAD)) return;
        if (memory.pending.size > 0) {
          const text = data.toString("utf8");
          try {
            const msg = JSON.parse(text) as { id?: JsonRpcId; method?: unknown; result?: { sessionId?: unknown }; error?: unknown };
            if (msg.method === undefined) memory.answer(msg, text);
          } catch {
            // the daemon only sends JSON; a broken frame is passed on for the editor to judge
          }
        }
      }
      writeLine(data, socket);
    });
    socket.on("close", () => {
      resumeStdin();
      void lost();
    });
    socket.on("error", (err) => process.stderr.write(`reasonix acp: socket error: ${err.message}\n`));
    for (const line of early.splice(0)) send(socket, line);
    if (stdinEnded) void finish();
  };

  /**
   * The daemon went away. Every unanswered request gets its error now (nothing hangs, no prompt is
   * re-sent); then, if a daemon comes back (a supervisor restarted it: shim/rejoin.ts says how long
   * that may take), the shim rejoins as the same window; otherwise it exits non-zero so the editor
   * shows the failure.
   */
  const lost = async (): Promise<void> => {
    ws = undefined;
    if (stdinEnded) exit(0);
    const info = readDaemonInfo(paths);
    const logPath = info?.logFile ?? paths.logFile;
    const message = `The Reasonix daemon connection was lost; see ${logPath}`;
    for (const id of memory.takePending()) {
      writeLine(errorLine(id, ErrorCode.DaemonLost, message, { reason: "daemon_lost", logPath }));
    }
    flushOut();
    process.stderr.write(`reasonix acp: ${message}\n`);
    // A daemon that is still running dropped this window on purpose (it fell too far behind): a
    // rejoin would hide the updates it missed, so the editor is told instead. One killed outright
    // closes its sockets a moment before its process is gone, so "still running" must last a while.
    if (daemonPid !== undefined && (await stillRunningAfter(daemonPid, STILL_RUNNING_MS))) {
      // Requests the editor sent meanwhile are answered too.
      for (const id of memory.takePending()) writeLine(errorLine(id, ErrorCode.DaemonLost, message, { reason: "daemon_lost", logPath }));
      exit(1);
    }
    const socket = await rejoinDaemon(paths, { model, umask }, daemonPid, () => stdinEnded);
    if (socket) {
      // Rejoin first, then whatever the editor sent meanwhile.
      early.unshift(...memory.rejoinLines());
      attach(socket);
      process.stderr.write(`reasonix acp: reconnected to the daemon (pid ${readDaemonInfo(paths)?.pid ?? "?"})\n`);
      return;
    }
    // Requests the editor sent while we waited are answered too, not dropped with the exit.
    for (const id of memory.takePending()) {
      writeLine(errorLine(id, ErrorCode.DaemonLost, message, { reason: "daemon_lost", logPath }));
    }
    exit(stdinEnded ? 0 : 1);
  };

  try {
    attach(await connectOrStart(paths, { model, umask }));
  } catch (err) {
    // No daemon: the cause goes to stderr once, and to the editor as the error of every request it
    // sends (the ones already queued and every later one) until it closes stdin. Never a silent exit.
    const message = errorText(err);
    const reason = err instanceof DaemonUnavailableError ? err.reason : "daemon_unavailable";
    unavailable = { message, data: { reason, logPath: paths.logFile } };
    process.stderr.write(`reasonix acp: ${message}\n`);
    for (const line of early.splice(0)) refuse(line);
    flushOut();
    if (stdinEnded) exit(1);
  }
}
