/**
 * `reasonix acp` as a unit: a dumb pipe between the editor's lines and the daemon's /acp WebSocket,
 * plus the little it must know to never leave the editor hanging: which editor requests are still
 * unanswered. It owns no process and keeps no module state: `runAcp` takes the editor's input and
 * output, a place for diagnostics and a way to reach the daemon. acp-main.ts wires it to stdio and
 * the Unix socket; the tests' in-process connector wires the same code to streams in memory.
 * The output carries ACP lines only; everything else goes to `stderr`.
 */
import { afterBound } from "../shared/bound.js";
import { idFromHead, LineReader, MAX_LINE_BYTES } from "../shared/ndjson.js";
import { ErrorCode, ExactId, type JsonRpcId } from "../shared/jsonrpc.js";
import { parseFlags } from "../shared/cli.js";
import { DaemonUnavailableError, type DaemonLink, type ShimSocket } from "./connect.js";
import { exactId, PRIVATE_ID_PREFIX, ShimMemory } from "./memory.js";
import { rejoin } from "./rejoin.js";

export const ACP_USAGE = "usage: reasonix acp [--model provider/model]\n";

/** `reasonix acp`'s one flag; throws UsageError on anything else. */
export function parseAcpArgs(args: string[]): { model?: string | undefined } {
  // How editors start it: util.parseArgs (two more modules to compile) is left for when there are flags.
  if (args.length === 0) return {};
  return { model: parseFlags(args, { model: { type: "string" } }, ACP_USAGE).values.model };
}

/** What a window is wired to: the editor's two streams, a diagnostics sink, the daemon. */
export interface ShimIo {
  /** the editor's NDJSON lines (stdin) */
  input: NodeJS.ReadableStream;
  /** where ACP lines go (stdout); an `error` on it is the editor having closed it */
  output: NodeJS.WritableStream;
  stderr(text: string): void;
  daemon: DaemonLink;
}

export interface ShimRun {
  /** The exit status, once the window is done: the process exits with it. */
  readonly exited: Promise<number>;
  /** The window dies on the spot: nothing more is written, the socket is dropped without a close frame. */
  kill(): void;
}

export function runAcp(io: ShimIo): ShimRun {
  return new AcpShim(io);
}

/** The lines, each followed by "\n", in one buffer: one copy each, no separate newline buffers to join. */
function linesOf(lines: readonly Buffer[]): Buffer {
  let total = lines.length;
  for (const line of lines) total += line.length;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const line of lines) {
    out.set(line, at);
    at += line.length;
    out[at++] = 0x0a;
  }
  return out;
}
const ANSWER_HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const PRIVATE_HEAD = Buffer.from(`{"jsonrpc":"2.0","id":"${PRIVATE_ID_PREFIX}`);
/** Byte by byte: Buffer#compare's argument checks cost more than these twenty-odd bytes, once per frame. */
function startsWith(data: Buffer, head: Buffer): boolean {
  if (data.length < head.length) return false;
  for (let i = 0; i < head.length; i++) if (data[i] !== head[i]) return false;
  return true;
}
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const STILL_RUNNING_MS = 500;

/**
 * How many of `lines`, from the first, are initialize requests: the only lines sent before the
 * daemon has accepted the upgrade. Should that connection fail after the daemon read them, they are
 * sent again on the next one, which only an initialize (it sets up nothing that outlives its
 * connection) can take; a session/new or a prompt could be carried out twice.
 */
function leadingInitializes(lines: readonly string[]): number {
  let n = 0;
  for (const line of lines) {
    try {
      const msg = JSON.parse(line) as { method?: unknown } | null;
      if (msg?.method !== "initialize") break;
    } catch {
      break;
    }
    n++;
  }
  return n;
}

/** An answer of the shim's own; an id kept as its JSON text (ExactId) is written back as that text. */
function errorLine(id: JsonRpcId, code: number, message: string, data?: unknown): string {
  const error = JSON.stringify(data === undefined ? { code, message } : { code, message, data });
  return `{"jsonrpc":"2.0","id":${id instanceof ExactId ? id.text : JSON.stringify(id)},"error":${error}}`;
}

class AcpShim implements ShimRun {
  readonly exited: Promise<number>;
  private resolveExit!: (code: number) => void;
  /** exited or killed: nothing more happens */
  private stopped = false;
  private out: Buffer[] = [];
  private outSource: ShimSocket | undefined;
  private outPaused = false;
  /** The editor closed the output: nothing more is written. */
  private outputGone = false;
  /** Editor lines that arrive while we (re)connect wait here, in order. */
  private readonly early: string[] = [];
  private ws: ShimSocket | undefined;
  private readonly memory = new ShimMemory();
  private inputEnded = false;
  /** While the daemon's socket buffer is full, the input is not read. */
  private inputPaused = false;
  /** Set when no daemon can be had: every request is answered with this, until the input ends. */
  private unavailable: { message: string; data: { reason: string; logPath: string } } | undefined;
  private readonly reader: LineReader;

  constructor(private readonly io: ShimIo) {
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    this.reader = new LineReader({
      line: (line) => this.forward(line),
      oversize: (bytes, head) => {
        const limit = `${MAX_LINE_BYTES / (1024 * 1024)} MiB`;
        this.writeLine(errorLine(idFromHead(head), ErrorCode.InvalidRequest, `Message too large: a line of ${bytes} bytes exceeds the ${limit} limit`));
      },
    });
    io.input.on("data", (chunk: Buffer | string) => this.reader.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    io.input.on("end", () => this.inputEnd());
    io.output.on("error", () => this.outputClosed());
    void this.connect();
  }

  kill(): void {
    this.stopped = true;
    this.out = [];
    this.ws?.destroy();
  }

  private exit(code: number): void {
    if (this.stopped) return;
    this.flushOut();
    this.stopped = true;
    // As a process exit would: the kernel drops the socket, no close frame.
    this.ws?.destroy();
    this.resolveExit(code);
  }

  /**
   * Queues one line for the output. Lines that arrive together (one socket read holds many frames
   * during a replay) go out in one write, not one syscall each.
   */
  private writeLine(line: string | Buffer, source?: ShimSocket): void {
    if (this.outputGone || this.stopped) return;
    this.out.push(typeof line === "string" ? Buffer.from(line) : line);
    if (source) this.outSource = source;
    if (this.out.length === 1) queueMicrotask(() => this.flushOut());
  }

  /**
   * Writes what is queued; when the editor stops reading, stops reading the daemon too, so the daemon
   * sees the backlog (and drops a window that falls too far behind) instead of this process ballooning.
   */
  private flushOut(): void {
    if (this.out.length === 0 || this.outputGone || this.stopped) return;
    const data = linesOf(this.out);
    this.out = [];
    const source = this.outSource;
    if (!this.io.output.write(data) && source && !this.outPaused) {
      source.pause();
      this.outPaused = true;
      this.io.output.once("drain", () => {
        this.outPaused = false;
        source.resume();
      });
    }
  }

  private refuse(line: string): void {
    let msg: { id?: JsonRpcId; method?: unknown };
    try {
      msg = JSON.parse(line) as { id?: JsonRpcId; method?: unknown };
    } catch {
      this.writeLine(errorLine(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON"));
      return;
    }
    // Notifications and the editor's answers are never answered.
    if (msg && typeof msg === "object" && typeof msg.method === "string" && msg.id !== undefined) {
      const { message, data } = this.unavailable!;
      this.writeLine(errorLine(exactId(msg.id, line), ErrorCode.DaemonUnavailable, message, data));
    }
  }

  /** A daemon that stops reading must not make this process buffer the editor's lines without limit. */
  private send(socket: ShimSocket, line: string): void {
    if (socket.send(line) || this.inputPaused) return;
    this.inputPaused = true;
    this.io.input.pause();
    socket.once("drain", () => this.resumeInput());
  }

  private resumeInput(): void {
    if (!this.inputPaused) return;
    this.inputPaused = false;
    this.io.input.resume();
  }

  private forward(line: string): void {
    if (this.stopped) return;
    if (this.unavailable) {
      this.refuse(line);
      return;
    }
    this.memory.fromEditor(line);
    if (this.ws) this.send(this.ws, line);
    else this.early.push(line);
  }

  private inputEnd(): void {
    this.reader.end();
    this.inputEnded = true;
    if (this.unavailable) this.exit(1);
    // Not connected yet: the lines wait in `early`, and attach() leaves once they are sent.
    else if (this.ws) void this.leave();
  }

  /**
   * The editor closed the input: the sessions stay in the daemon. Answers to quick requests already
   * sent (an initialize piped in with EOF right behind it) are still delivered; a running prompt is
   * not waited for, its turn goes on in the daemon. Then close politely so the daemon detaches us.
   */
  private async leave(): Promise<void> {
    const deadline = Date.now() + 2000;
    while (this.ws && this.memory.quickPending() && Date.now() < deadline) await sleep(5);
    this.ws?.close(1000, "editor closed stdin");
  }

  /**
   * The editor closed the output (EPIPE): it left, like closing the input, but nothing can reach it
   * any more, so nothing is answered or waited for and nothing is said on stderr. The daemon is told
   * politely (its turns go on there); the socket is read again so its close completes.
   */
  private outputClosed(): void {
    if (this.outputGone) return;
    this.outputGone = true;
    this.out = [];
    this.inputEnded = true;
    this.io.input.pause();
    if (!this.ws) {
      this.exit(0);
      return;
    }
    this.ws.resume();
    this.ws.close(1000, "editor closed stdout");
    // A daemon that never answers the close is not waited for past 2 s.
    afterBound(2000, () => this.exit(0)).unref();
  }

  private async connect(): Promise<void> {
    // The editor's initialize, there already when the socket connects, goes with the upgrade.
    let sent = 0;
    const first = (): string[] => {
      sent = leadingInitializes(this.early);
      return this.early.slice(0, sent);
    };
    try {
      const socket = await this.io.daemon.open(true, first);
      if (this.stopped) socket.destroy();
      else this.attach(socket, sent);
    } catch (err) {
      // No daemon: the cause goes to stderr once, and to the editor as the error of every request it
      // sends (the ones already queued and every later one) until it closes the input. Never a silent exit.
      if (this.stopped) return;
      const message = (err as Error).message;
      const reason = err instanceof DaemonUnavailableError ? err.reason : "daemon_unavailable";
      this.unavailable = { message, data: { reason, logPath: this.io.daemon.logFile } };
      this.io.stderr(`reasonix acp: ${message}\n`);
      for (const line of this.early.splice(0)) this.refuse(line);
      this.flushOut();
      if (this.inputEnded) this.exit(1);
    }
  }

  /** `sent`: how many of the waiting lines went with the upgrade already. */
  private attach(socket: ShimSocket, sent = 0): void {
    this.ws = socket;
    // Frames pass through as bytes: most are notifications, decoded only to be encoded again.
    socket.on("bytes", (data) => this.fromDaemon(socket, data));
    socket.on("close", () => {
      this.resumeInput();
      if (this.ws === socket) void this.lost();
    });
    socket.on("error", (err) => this.io.stderr(`reasonix acp: socket error: ${err.message}\n`));
    for (const line of this.early.splice(0).slice(sent)) this.send(socket, line);
    if (this.inputEnded) void this.leave();
  }

  private fromDaemon(socket: ShimSocket, data: Buffer): void {
    // The daemon writes "id" right after "jsonrpc", so only frames that start so can settle a request.
    if (startsWith(data, ANSWER_HEAD)) {
      if (startsWith(data, PRIVATE_HEAD)) return;
      if (this.memory.pending.size > 0) {
        const text = data.toString("utf8");
        try {
          const msg = JSON.parse(text) as { id?: JsonRpcId; method?: unknown; result?: { sessionId?: unknown }; error?: unknown };
          if (msg.method === undefined) this.memory.answer(msg, text);
        } catch {
          // the daemon only sends JSON; a broken frame is passed on for the editor to judge
        }
      }
    }
    this.writeLine(data, socket);
  }

  /** Every unanswered editor request gets the daemon-lost error: nothing hangs, no prompt is re-sent. */
  private answerPending(message: string, logPath: string): void {
    for (const id of this.memory.takePending()) this.writeLine(errorLine(id, ErrorCode.DaemonLost, message, { reason: "daemon_lost", logPath }));
  }

  /**
   * The daemon went away. Every unanswered request gets its error now; then, if a daemon answers
   * again within a few seconds (a supervisor restarted it), the shim rejoins as the same window;
   * otherwise it exits non-zero so the editor shows the failure.
   */
  private async lost(): Promise<void> {
    this.ws = undefined;
    if (this.stopped) return;
    if (this.inputEnded) {
      this.exit(0);
      return;
    }
    const logPath = this.io.daemon.info()?.logFile ?? this.io.daemon.logFile;
    const message = `The Reasonix daemon connection was lost; see ${logPath}`;
    this.answerPending(message, logPath);
    this.flushOut();
    this.io.stderr(`reasonix acp: ${message}\n`);
    // A daemon that is still running dropped this window on purpose (it fell too far behind): a
    // rejoin would hide the updates it missed, so the editor is told instead. One killed outright
    // closes its sockets a moment before its process is gone, so "still running" must last a while.
    if (await this.io.daemon.stillRunningAfter(STILL_RUNNING_MS)) {
      // Requests the editor sent meanwhile are answered too.
      this.answerPending(message, logPath);
      this.exit(1);
      return;
    }
    if (await this.rejoin()) return;
    // Requests the editor sent while we waited are answered too, not dropped with the exit.
    this.answerPending(message, logPath);
    this.exit(this.inputEnded ? 0 : 1);
  }

  /** Joins a daemon that comes back as the same window (shim/rejoin.ts: how long it may take); true once joined. */
  private async rejoin(): Promise<boolean> {
    const socket = await rejoin(this.io.daemon, () => this.inputEnded || this.stopped);
    if (!socket) return this.stopped;
    if (this.stopped) {
      socket.destroy();
      return true;
    }
    // Rejoin first, then whatever the editor sent meanwhile.
    this.early.unshift(...this.memory.rejoinLines());
    this.attach(socket);
    this.io.stderr(`reasonix acp: reconnected to the daemon (pid ${this.io.daemon.info()?.pid ?? "?"})\n`);
    return true;
  }
}
