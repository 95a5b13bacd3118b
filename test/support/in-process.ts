/**
 * The in-process connector (DESIGN §9): the daemon is created inside the test process by the same
 * createDaemon `reasonix daemon run` uses (real LevelDB in the test's REASONIX_HOME, the real fastify
 * app listening on its Unix socket, so `reasonix daemon status` and the other commands reach it), and
 * in place of a shim process a bridge does what the shim does: the client's NDJSON lines go to
 * GET /acp as text frames, with the shim's upgrade headers, and frames come back as lines. The tee,
 * the SDK client and every wait are the same `Agent` the process connector uses.
 *
 * What stays with the shim process (and its tests): reconnecting to a restarted daemon, handing over
 * to a daemon of another build, and starting a daemon through the ready pipe.
 */
import { readFileSync } from "node:fs";
import WebSocket, { type RawData } from "ws";
import { createDaemon, type Daemon } from "../../daemon/main.js";
import { AlreadyRunningError, StartupError } from "../../daemon/startup.js";
import { currentBuild } from "../../shared/build.js";
import { ErrorCode, ExactId, type JsonRpcId } from "../../shared/jsonrpc.js";
import { idFromHead, LineReader, MAX_LINE_BYTES } from "../../shared/ndjson.js";
import { resolvePaths, type Paths } from "../../shared/paths.js";
import { HEADER_BUILD, HEADER_ENV, HEADER_MODEL, HEADER_SHIM_PID, HEADER_UMASK, HEADER_WIRE, WIRE_MAJOR } from "../../shared/wire.js";
import { assertTrustedSocket, DaemonUnavailableError, envSnapshot, readDaemonInfo } from "../../shim/connect.js";
import { PRIVATE_ID_PREFIX, ShimMemory } from "../../shim/memory.js";
import { Agent, agentEnv, DEFAULT_WAIT_MS, inProcessDaemons, type AgentOptions } from "./harness.js";

// ---------------------------------------------------------------------------------------------
// Daemons, one per home, started by the first window that needs one (as a shim would)

const daemons = new Map<string, Promise<Daemon>>();

function forget(home: string, which: Promise<Daemon>): void {
  if (daemons.get(home) !== which) return;
  daemons.delete(home);
  inProcessDaemons.delete(home);
}

/**
 * The home's daemon, created with `env` (the environment of the window that starts it, as a shim
 * passes its own to the daemon it spawns) when none is running. One that is stopping is waited for.
 */
async function daemonFor(home: string, env: NodeJS.ProcessEnv): Promise<Daemon> {
  const known = daemons.get(home);
  if (known) {
    const daemon = await known.catch(() => undefined);
    if (daemon && !daemon.state.draining) return daemon;
    await daemon?.closed;
    // Another window may have started the next daemon while this one waited.
    const next = daemons.get(home);
    if (next && next !== known) return daemonFor(home, env);
  }
  const created = createDaemon({ paths: resolvePaths(env), env });
  daemons.set(home, created);
  inProcessDaemons.set(home, { stop: () => stopDaemonIn(home) });
  created.then(
    (daemon) => void daemon.closed.then(() => forget(home, created)),
    () => forget(home, created),
  );
  return created;
}

/** Closes the home's in-process daemon (sessions, MCP servers, store); the next window starts another. */
async function stopDaemonIn(home: string): Promise<void> {
  const known = daemons.get(home);
  const daemon = await known?.catch(() => undefined);
  await daemon?.close("stopped by the test");
}

// ---------------------------------------------------------------------------------------------
// The window: the shim's job, done in this process

function errorLine(id: JsonRpcId, code: number, message: string, data?: unknown): string {
  const error = JSON.stringify(data === undefined ? { code, message } : { code, message, data });
  return `{"jsonrpc":"2.0","id":${id instanceof ExactId ? id.text : JSON.stringify(id)},"error":${error}}`;
}

function frameBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/** `reasonix acp` takes one flag; anything else here is a mistake in the test. */
function modelFlag(args: readonly string[]): string | undefined {
  if (args.length === 0) return undefined;
  if (args.length === 2 && args[0] === "--model") return args[1];
  if (args.length === 1 && args[0]!.startsWith("--model=")) return args[0]!.slice("--model=".length);
  throw new Error(`in-process connector: unsupported shim arguments ${JSON.stringify(args)}; use { connector: "process" }`);
}

/**
 * This process's umask, read without setting it: the daemon in this process creates files on other
 * threads meanwhile, which `process.umask()` (it sets the mask twice) would race.
 */
function ownUmask(): number | undefined {
  try {
    const m = /^Umask:\s*([0-7]+)$/m.exec(readFileSync("/proc/self/status", "utf8"));
    return m ? Number.parseInt(m[1]!, 8) : undefined;
  } catch {
    return undefined;
  }
}

/** The upgrade the shim makes (shim/connect.ts openSocket), with `ws` instead of its own client. */
function openWindow(paths: Paths, env: NodeJS.ProcessEnv, model: string | undefined, umask: number | undefined): Promise<WebSocket> {
  const headers: Record<string, string> = {
    [HEADER_WIRE]: String(WIRE_MAJOR),
    [HEADER_BUILD]: currentBuild(env),
    [HEADER_SHIM_PID]: String(process.pid),
    [HEADER_ENV]: Buffer.from(JSON.stringify(envSnapshot(env))).toString("base64"),
  };
  if (model) headers[HEADER_MODEL] = model;
  if (umask !== undefined) headers[HEADER_UMASK] = umask.toString(8).padStart(4, "0");
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws+unix:${paths.socketPath}:/acp`, { headers, perMessageDeflate: false, handshakeTimeout: 3000 });
    ws.once("open", () => {
      ws.removeAllListeners("error");
      resolve(ws);
    });
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => {
        let reason = body;
        try {
          reason = (JSON.parse(body) as { error?: string }).error ?? body;
        } catch {
          // plain text
        }
        reject(new DaemonUnavailableError(`the daemon refused the connection (HTTP ${res.statusCode}): ${reason}`));
      });
    });
    ws.once("error", reject);
  });
}

/**
 * One editor window on the in-process daemon. closeStdin() is the window leaving (the socket closed
 * politely, exit 0), kill() the window dying (the socket destroyed, no close frame).
 */
export class InProcessAgent extends Agent {
  private readonly env: NodeJS.ProcessEnv;
  private readonly paths: Paths;
  private readonly model: string | undefined;
  private readonly memory = new ShimMemory();
  private readonly reader: LineReader;
  /** lines the client wrote before the socket was open, in order */
  private readonly early: string[] = [];
  private socket: WebSocket | undefined;
  private inputEnded = false;
  /** set when no daemon can be had: every request gets this, as the shim answers */
  private unavailable: { message: string; data: { reason: string; logPath: string } } | undefined;

  private constructor(options: AgentOptions) {
    super(options);
    if (options.command || options.detached) throw new Error('in-process connector: "command" and "detached" need { connector: "process" }');
    this.env = agentEnv(options);
    this.paths = resolvePaths(this.env);
    this.model = modelFlag(options.args ?? []);
    this.reader = new LineReader({
      line: (line) => this.forward(line),
      oversize: (bytes, head) =>
        this.answer(
          errorLine(
            idFromHead(head),
            ErrorCode.InvalidRequest,
            `Message too large: a line of ${bytes} bytes exceeds the ${MAX_LINE_BYTES / (1024 * 1024)} MiB limit`,
          ),
        ),
    });
    void this.connect();
  }

  static spawn(options: AgentOptions): InProcessAgent {
    return new InProcessAgent(options);
  }

  async closeStdin(timeoutMs = DEFAULT_WAIT_MS): Promise<number | null> {
    if (!this.inputEnded && !this.exitStatus) {
      this.inputEnded = true;
      this.reader.end();
      if (this.unavailable) this.end(1);
      else if (this.socket) void this.leave();
      // Not connected yet: connect() leaves once the early lines are sent.
    }
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([this.exited, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
    clearTimeout(timer);
    if (!result) throw new Error(`window did not leave within ${timeoutMs} ms of its input closing${this.diagnostics()}`);
    return result.code;
  }

  async kill(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.exitStatus) return;
    this.inputEnded = true;
    this.socket?.terminate();
    this.socket = undefined;
    this.agentOutputEnded();
    this.finish({ code: null, signal });
  }

  protected deliver(bytes: Buffer): Promise<void> {
    if (this.inputEnded || this.exitStatus) return Promise.reject(new Error("agent stdin is closed"));
    this.reader.push(bytes);
    return Promise.resolve();
  }

  private async connect(): Promise<void> {
    let socket: WebSocket;
    try {
      assertTrustedSocket(this.paths);
      try {
        await daemonFor(this.options.home, this.env);
      } catch (err) {
        // A daemon of another process holds the store: it answers on the socket.
        if (!(err instanceof AlreadyRunningError)) throw err;
      }
      socket = await openWindow(this.paths, this.env, this.model, this.options.umask ?? ownUmask());
    } catch (err) {
      this.refuseAll(err);
      return;
    }
    if (this.exitStatus) {
      socket.terminate();
      return;
    }
    this.attach(socket);
  }

  private attach(socket: WebSocket): void {
    this.socket = socket;
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      const bytes = frameBytes(data);
      const text = bytes.toString("utf8");
      // The shim's bookkeeping (shim/acp.ts): answers settle the editor's pending requests.
      if (text.startsWith('{"jsonrpc":"2.0","id":')) {
        if (text.startsWith(`{"jsonrpc":"2.0","id":"${PRIVATE_ID_PREFIX}`)) return;
        if (this.memory.pending.size > 0) {
          try {
            const msg = JSON.parse(text) as { id?: JsonRpcId; method?: unknown; result?: { sessionId?: unknown }; error?: unknown };
            if (msg.method === undefined) this.memory.answer(msg);
          } catch {
            // passed on for the client to judge
          }
        }
      }
      this.answer(text);
    });
    socket.on("close", () => this.lost(socket));
    socket.on("error", (err) => (this.stderrText += `reasonix acp: socket error: ${err.message}\n`));
    for (const line of this.early.splice(0)) socket.send(line);
    if (this.inputEnded) void this.leave();
  }

  private forward(line: string): void {
    if (this.unavailable) {
      this.refuse(line);
      return;
    }
    this.memory.fromEditor(line);
    if (this.socket) this.socket.send(line);
    else this.early.push(line);
  }

  /** A line from the agent's side, into the tee. */
  private answer(line: string): void {
    this.fromAgent(Buffer.from(`${line}\n`, "utf8"));
  }

  /** As the shim leaves: quick requests already sent are answered first (2 s at most), a prompt is not waited for. */
  private async leave(): Promise<void> {
    const deadline = Date.now() + 2000;
    while (this.socket && this.memory.quickPending() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    this.socket?.close(1000, "editor closed stdin");
  }

  /** The daemon went away: unanswered requests get the shim's error; no reconnecting in-process. */
  private lost(socket: WebSocket): void {
    if (this.socket !== socket || this.exitStatus) return;
    this.socket = undefined;
    if (this.inputEnded) {
      this.end(0);
      return;
    }
    const logPath = readDaemonInfo(this.paths)?.logFile ?? this.paths.logFile;
    const message = `The Reasonix daemon connection was lost; see ${logPath}`;
    for (const id of this.memory.takePending()) this.answer(errorLine(id, ErrorCode.DaemonLost, message, { reason: "daemon_lost", logPath }));
    this.stderrText += `reasonix acp: ${message}\n`;
    this.end(1);
  }

  private refuseAll(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const reason = err instanceof DaemonUnavailableError || err instanceof StartupError ? err.reason : "daemon_unavailable";
    this.unavailable = { message, data: { reason, logPath: this.paths.logFile } };
    this.stderrText += `reasonix acp: ${message}\n`;
    for (const line of this.early.splice(0)) this.refuse(line);
    if (this.inputEnded) this.end(1);
  }

  private refuse(line: string): void {
    let msg: { id?: JsonRpcId; method?: unknown };
    try {
      msg = JSON.parse(line) as { id?: JsonRpcId; method?: unknown };
    } catch {
      this.answer(errorLine(null, ErrorCode.ParseError, "Parse error: the line is not valid JSON"));
      return;
    }
    if (msg && typeof msg === "object" && typeof msg.method === "string" && msg.id !== undefined) {
      this.answer(errorLine(msg.id, ErrorCode.DaemonUnavailable, this.unavailable!.message, this.unavailable!.data));
    }
  }

  private end(code: number): void {
    this.agentOutputEnded();
    this.finish({ code, signal: null });
  }
}
