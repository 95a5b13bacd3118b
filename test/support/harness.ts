/**
 * Drives the agent the way an editor does (DESIGN §9): the official @agentclientprotocol/sdk client
 * on one end, and a tee on both directions that keeps every raw line and runs the per-method schema
 * checker over everything the agent writes. `Agent` is that client and tee over any byte transport;
 * `AgentProcess` puts the real `reasonix acp` shim behind it as a child process on stdio, and
 * in-process.ts a daemon inside the test process.
 */
import { AssertionError } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { AcpWireChecker } from "./acp-schema.js";
import { isRunning } from "../../shared/process.js";

/** The repository root: this file runs as dist/test/support/harness.js. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const BIN = join(REPO_ROOT, "bin", "reasonix.js");
/** The key the harness hands the agent; tests grep logs and errors for it to prove it never leaks. */
export const TEST_API_KEY = "sk-test-secret-key";

export const DEFAULT_WAIT_MS = 10_000;
const DEFAULT_REQUEST_MS = 30_000;
const VERBOSE = process.env.REASONIX_TEST_VERBOSE === "1";

// ---------------------------------------------------------------------------------------------
// Homes and the daemon living in them

export interface TestHome {
  dir: string;
  cleanup(): Promise<void>;
}

const agentsByHome = new Map<string, Set<Agent>>();

/**
 * Daemons living inside this test process, by home (in-process.ts registers them): stopDaemon closes
 * those instead of signalling a pid, which would be our own.
 */
export const inProcessDaemons = new Map<string, { stop(): Promise<void> }>();

/**
 * A fresh REASONIX_HOME. The name stays short on purpose: `<dir>/run/daemon.sock` fits in sun_path
 * (108 bytes on Linux, 104 on macOS), so the socket is where tests look for it (a longer home gets a
 * short socket path elsewhere, named in daemon.json).
 */
export async function makeHome(): Promise<TestHome> {
  const dir = await mkdtemp("/tmp/rx-");
  return { dir, cleanup: () => cleanupHome(dir) };
}

async function cleanupHome(dir: string): Promise<void> {
  const agents = agentsByHome.get(dir);
  agentsByHome.delete(dir);
  await Promise.all([...(agents ?? [])].map((a) => a.kill("SIGKILL").catch(() => undefined)));
  await stopDaemon(dir);
  await rm(dir, { recursive: true, force: true });
}

/** The daemon's pid from `<home>/run/daemon.json`, if the file exists and names one. */
export function daemonPid(home: string): number | undefined {
  try {
    const info = JSON.parse(readFileSync(join(home, "run", "daemon.json"), "utf8")) as { pid?: unknown };
    return typeof info.pid === "number" && Number.isInteger(info.pid) && info.pid > 0 ? info.pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Live processes on this machine whose command line holds `marker` (the test's own process aside).
 * A sandboxed command sees its own pid namespace, so `$$` inside names nothing out here: tests find
 * its processes by a word only they use, such as `sleep 61.7`.
 */
export function hostPids(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      if (cmdline.includes(marker) && isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/**
 * hostPids once SIGKILLed processes have had up to `graceMs` to die: a kill that lands on a loaded
 * machine leaves its processes runnable with the signal pending for a moment (seen: 2 of a killed
 * sandbox's processes in state R with SIGKILL pending, gone soon after). Processes that were never
 * killed are still there when it returns, as a sleep longer than the grace is.
 */
export async function pidsAfterKill(markers: readonly string[], graceMs = 1000): Promise<number[]> {
  const look = (): number[] => markers.flatMap((m) => hostPids(m));
  for (const end = Date.now() + graceMs; look().length > 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  return look();
}

/** For a failure message: each process's pid, state, parent and command line (what is left, and why). */
export function describePids(pids: readonly number[]): string {
  return pids
    .map((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const [state, ppid, pgid, sid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").slice(0, 300);
        // Pending signals (a SIGKILL is bit 9, 0x100): killed and not yet scheduled to die, or not killed.
        const pending = /^(?:SigPnd|ShdPnd):.*$/gm;
        const signals = (readFileSync(`/proc/${pid}/status`, "utf8").match(pending) ?? []).map((l) => l.replace(/\s+/g, " ")).join(", ");
        return `${pid} ${state} ppid ${ppid} pgid ${pgid} sid ${sid} (${signals}): ${cmdline}`;
      } catch {
        return `${pid} gone`;
      }
    })
    .join("\n");
}

/** Zombies count as dead: a killed daemon whose parent has not reaped it yet is gone for our purposes. */
export const isAlive = isRunning;

/** Waits until the daemon has written its pid and is running; returns the pid. */
export async function waitForDaemonPid(home: string, timeoutMs = DEFAULT_WAIT_MS): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pid = daemonPid(home);
    if (pid !== undefined && isAlive(pid)) return pid;
    if (Date.now() > deadline) throw new Error(`no live daemon in ${home}/run/daemon.json after ${timeoutMs} ms`);
    await sleep(25);
  }
}

export async function waitForPidExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

/**
 * SIGTERM, then SIGKILL after 3 s. A stale daemon.json can name a pid the system has since reused,
 * so only a process that looks like ours (node or reasonix on its command line) is signalled.
 */
export async function stopDaemon(home: string): Promise<void> {
  const inside = inProcessDaemons.get(home);
  if (inside) return inside.stop();
  const pid = daemonPid(home);
  if (pid === undefined || pid === process.pid || !isAlive(pid) || !looksLikeOurs(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  if (await waitForPidExit(pid, 3000)) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    return;
  }
  await waitForPidExit(pid, 5000);
}

function looksLikeOurs(pid: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return /node|reasonix/.test(cmdline);
  } catch {
    return existsSync("/proc") ? false : true;
  }
}

// ---------------------------------------------------------------------------------------------
// The agent: SDK client and tee over a transport

export interface AgentOptions {
  home: string;
  model?: { url: string };
  env?: Record<string, string | undefined>;
  args?: string[];
  /** sent by initialize(); default: no fs, no terminal */
  clientCapabilities?: object;
  /** no SDK client attached: the harness itself answers, for malformed-line and byte-level tests */
  raw?: boolean;
  cwd?: string;
  /** replaces `node bin/reasonix.js acp`, e.g. to run a fake agent in the harness's own tests */
  command?: string[];
  /** default timeout for rpc.request(); default 30 s */
  requestTimeoutMs?: number;
  /** spawn the shim as the leader of its own process group, as some ACP clients do */
  detached?: boolean;
  /**
   * The editor's umask: the shim process starts with it (the in-process window sends it as the shim
   * would). Default: the test process's own.
   */
  umask?: number;
}

export interface SessionUpdateRecord {
  sessionId: string;
  update: any;
}

export interface AgentRequestRecord {
  id: unknown;
  method: string;
  params: any;
}

export interface RequestOptions {
  timeoutMs?: number;
}

export interface Rpc {
  request(method: string, params: unknown, options?: RequestOptions): Promise<any>;
  notify(method: string, params: unknown): Promise<void>;
}

export const DEFAULT_CLIENT_CAPABILITIES = Object.freeze({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });

type Source = "sdk" | "raw" | "harness";

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * What an editor sees of an agent: the SDK client (or, in raw mode, the harness itself) writing
 * NDJSON lines, a tee recording every line both ways and checking the agent's against the schema,
 * and waits over what was recorded. Subclasses carry the bytes: `deliver` takes what the client
 * wrote, and they feed back `fromAgent` / `agentOutputEnded` / `finish`.
 */
export abstract class Agent {
  readonly checker = new AcpWireChecker();
  /** every line the agent wrote to stdout, without the newline */
  readonly stdoutLines: string[] = [];
  /** every stdout line that parsed as JSON, in order */
  readonly messages: any[] = [];
  /** every line written to the agent's stdin (SDK, raw and harness answers), without the newline */
  readonly stdinLines: string[] = [];
  /** every session/update received, in order */
  readonly updates: SessionUpdateRecord[] = [];
  /** every agent -> client request received, in order */
  readonly agentRequests: AgentRequestRecord[] = [];
  /** problems the tee saw that are not about a single message (unterminated line, stdout held open) */
  readonly wireProblems: string[] = [];
  readonly exited: Promise<ExitStatus>;
  /** the SDK client connection; undefined in raw mode */
  readonly sdk: acp.ClientConnection | undefined;
  readonly rpc: Rpc;

  /** answers session/request_permission; default selects the first allow_once option */
  onPermission: (params: any) => any | Promise<any> = defaultPermission;
  /** answers fs/*, terminal/*, elicitation and vendor requests; default: method not found */
  onClientRequest: (method: string, params: any) => any | Promise<any> = (method) => {
    throw acp.RequestError.methodNotFound(method);
  };

  protected readonly options: AgentOptions;
  protected stderrText = "";
  private stdoutRest = Buffer.alloc(0);
  private stdinRest = Buffer.alloc(0);
  private sdkInput: ReadableStreamDefaultController<Uint8Array> | undefined;
  private exitInfo: ExitStatus | undefined;
  private resolveExit!: (status: ExitStatus) => void;
  private readonly tickListeners = new Set<() => void>();
  /** ids of requests the SDK sent and the agent has not answered */
  private readonly sdkPending = new Set<string>();
  /** ids of requests written with writeRaw that the agent has not answered */
  private readonly rawPending = new Set<string>();
  /** raw-mode rpc requests awaiting their response */
  private readonly harnessPending = new Map<string, { resolve(v: any): void; reject(e: unknown): void }>();
  private nextHarnessId = 0;

  protected constructor(options: AgentOptions) {
    this.options = options;
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    if (options.raw) {
      this.sdk = undefined;
      this.rpc = {
        request: (method, params, opts) => this.withTimeout(method, this.harnessRequest(method, params), opts),
        notify: async (method, params) => {
          this.writeLines(JSON.stringify({ jsonrpc: "2.0", method, params }) + "\n", "harness");
        },
      };
    } else {
      this.sdk = this.connectSdk();
      const agent = this.sdk.agent;
      this.rpc = {
        request: (method, params, opts) => this.withTimeout(method, agent.request(method, params), opts),
        notify: (method, params) => agent.notify(method, params),
      };
    }

    let set = agentsByHome.get(options.home);
    if (!set) agentsByHome.set(options.home, (set = new Set()));
    set.add(this);
  }

  /** The editor closes the agent's input; resolves with the exit code. */
  abstract closeStdin(timeoutMs?: number): Promise<number | null>;

  /** The agent dies without a word; resolves once it is gone. */
  abstract kill(signal?: NodeJS.Signals): Promise<void>;

  /** The client closes its end of the agent's stdout: it reads nothing more, ever (a line half read is its loss). */
  abstract closeStdout(): void;

  /** Carries bytes the client wrote to the agent; rejects once the agent's input is closed. */
  protected abstract deliver(bytes: Buffer): Promise<void>;

  stderr(): string {
    return this.stderrText;
  }

  get exitStatus(): ExitStatus | undefined {
    return this.exitInfo;
  }

  // --- conveniences over rpc ----------------------------------------------------------------

  initialize(extra: object = {}): Promise<any> {
    return this.rpc.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: this.options.clientCapabilities ?? DEFAULT_CLIENT_CAPABILITIES,
      clientInfo: { name: "reasonix-tests", version: "0.0.0" },
      ...extra,
    });
  }

  newSession(cwd: string, extra: object = {}): Promise<any> {
    return this.rpc.request("session/new", { cwd, mcpServers: [], ...extra });
  }

  prompt(sessionId: string, prompt: string | object[], options?: RequestOptions): Promise<any> {
    const blocks = typeof prompt === "string" ? [{ type: "text", text: prompt }] : prompt;
    return this.rpc.request("session/prompt", { sessionId, prompt: blocks }, options);
  }

  cancel(sessionId: string): Promise<void> {
    return this.rpc.notify("session/cancel", { sessionId });
  }

  /** updates of one session, optionally from an index into `updates` */
  updatesFor(sessionId: string, from = 0): any[] {
    return this.updates
      .slice(from)
      .filter((u) => u.sessionId === sessionId)
      .map((u) => u.update);
  }

  /** concatenated text of one kind of chunk (default agent_message_chunk) for a session */
  textOf(sessionId: string, kind = "agent_message_chunk", from = 0): string {
    return this.updatesFor(sessionId, from)
      .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
      .map((u) => u.content.text as string)
      .join("");
  }

  // --- raw access ---------------------------------------------------------------------------

  /**
   * Raw bytes to stdin, bypassing the SDK (add "\n" yourself). Use string ids (or numbers the SDK
   * will not reach) for raw requests: their responses are kept from the SDK, matched by id.
   */
  writeRaw(data: string | Buffer): void {
    void this.writeLines(data, "raw");
  }

  /** Writes one raw request and resolves with the agent's response message (not its result). */
  async rawRequest(message: { id: string | number; [k: string]: unknown }, timeoutMs = DEFAULT_WAIT_MS): Promise<any> {
    const from = this.messages.length;
    this.writeRaw(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
    return this.waitForLine((m) => !("method" in m) && m.id === message.id, timeoutMs, from);
  }

  /** The first parsed stdout message (from index `from` of `messages`) matching pred. */
  waitForLine(pred: (msg: any) => boolean, timeoutMs = DEFAULT_WAIT_MS, from = 0): Promise<any> {
    let cursor = from;
    return this.waitFor("stdout message", timeoutMs, () => {
      for (; cursor < this.messages.length; cursor++) {
        if (pred(this.messages[cursor])) return { value: this.messages[cursor] };
      }
      return undefined;
    });
  }

  /** The agent's stderr once it matches `pattern` (a process agent's is looked at as it arrives). */
  waitForStderr(pattern: RegExp, timeoutMs = DEFAULT_WAIT_MS): Promise<string> {
    return this.waitFor("stderr text", timeoutMs, () => (pattern.test(this.stderrText) ? { value: this.stderrText } : undefined));
  }

  /** The first session/update (from index `from` of `updates`) matching pred. */
  waitForUpdate(pred: (u: SessionUpdateRecord) => boolean, timeoutMs = DEFAULT_WAIT_MS, from = 0): Promise<SessionUpdateRecord> {
    let cursor = from;
    return this.waitFor("session/update", timeoutMs, () => {
      for (; cursor < this.updates.length; cursor++) {
        if (pred(this.updates[cursor]!)) return { value: this.updates[cursor]! };
      }
      return undefined;
    });
  }

  /** The first agent -> client request (from index `from`) matching pred. */
  waitForAgentRequest(pred: (r: AgentRequestRecord) => boolean, timeoutMs = DEFAULT_WAIT_MS, from = 0): Promise<AgentRequestRecord> {
    let cursor = from;
    return this.waitFor("agent request", timeoutMs, () => {
      for (; cursor < this.agentRequests.length; cursor++) {
        if (pred(this.agentRequests[cursor]!)) return { value: this.agentRequests[cursor]! };
      }
      return undefined;
    });
  }

  /** Asserts stdout held only well-formed JSON-RPC 2.0 lines that match the ACP schema. */
  assertCleanWire(): void {
    const problems = [...this.wireProblems, ...this.checker.problems];
    if (problems.length > 0) {
      throw new AssertionError({
        message: `ACP wire problems (${problems.length}):\n- ${problems.join("\n- ")}`,
        actual: problems,
        expected: [],
        operator: "assertCleanWire",
      });
    }
  }

  /** `<home>/logs/daemon.log`, or "" when the daemon has not written one. */
  daemonLog(): string {
    try {
      return readFileSync(join(this.options.home, "logs", "daemon.log"), "utf8");
    } catch {
      return "";
    }
  }

  /** Context for a failure message: how the agent ended, the last stdout lines, stderr and daemon log tails. */
  diagnostics(): string {
    const exit = this.exitInfo ? `exited with code ${this.exitInfo.code} signal ${this.exitInfo.signal}` : "still running";
    const tailLines = this.stdoutLines.slice(-5).map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
    const indent = (text: string) => text.trimEnd().split("\n").join("\n    ") || "(empty)";
    const tail = (text: string, max: number) => (text.length > max ? `…${text.slice(-max)}` : text);
    let out = `\n  agent ${exit}\n  last stdout lines:\n    ${tailLines.join("\n    ") || "(none)"}\n  stderr:\n    ${indent(tail(this.stderrText, 3000))}`;
    const log = this.daemonLog();
    if (log) out += `\n  daemon.log:\n    ${indent(tail(log, 3000))}`;
    return out;
  }

  // --- for transports -----------------------------------------------------------------------

  /** Bytes the agent wrote to its stdout. */
  protected fromAgent(chunk: Buffer): void {
    let data = this.stdoutRest.length > 0 ? Buffer.concat([this.stdoutRest, chunk]) : chunk;
    let nl: number;
    while ((nl = data.indexOf(0x0a)) !== -1) {
      this.onAgentLine(data.subarray(0, nl).toString("utf8"));
      data = data.subarray(nl + 1);
    }
    this.stdoutRest = Buffer.from(data);
  }

  /** The agent's stdout ended. */
  protected agentOutputEnded(): void {
    if (this.stdoutRest.length > 0) {
      this.wireProblems.push("agent stdout ended in the middle of a line (no trailing newline)");
      const last = this.stdoutRest.toString("utf8");
      this.stdoutRest = Buffer.alloc(0);
      this.onAgentLine(last);
    }
    try {
      this.sdkInput?.close();
    } catch {
      // already closed
    }
    this.tick();
  }

  /** The exit code once the agent is gone; throws after `timeoutMs` (default 10 s) naming what it waited `after`. */
  protected async exitWithin(timeoutMs = DEFAULT_WAIT_MS, after: string): Promise<number | null> {
    // The timer is cleared, or it would hold the test file open for the whole timeout.
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([this.exited, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
    clearTimeout(timer);
    if (!result) throw new Error(`agent did not exit within ${timeoutMs} ms ${after}${this.diagnostics()}`);
    return result.code;
  }

  /** The agent is gone, and its output with it; the first call wins. */
  protected finish(status: ExitStatus): void {
    if (this.exitInfo) return;
    this.agentOutputEnded();
    this.exitInfo = status;
    this.afterExit();
    this.resolveExit(status);
  }

  // --- internals ----------------------------------------------------------------------------

  private connectSdk(): acp.ClientConnection {
    const client = (method: string) => (ctx: { params: any }) => this.onClientRequest(method, ctx.params);
    const m = acp.methods.client;
    const app = acp
      .client({ name: "reasonix-tests" })
      .onRequest(m.session.requestPermission, ({ params }) => this.onPermission(params))
      .onRequest(m.fs.readTextFile, client(m.fs.readTextFile))
      .onRequest(m.fs.writeTextFile, client(m.fs.writeTextFile))
      .onRequest(m.terminal.create, client(m.terminal.create))
      .onRequest(m.terminal.output, client(m.terminal.output))
      .onRequest(m.terminal.waitForExit, client(m.terminal.waitForExit))
      .onRequest(m.terminal.kill, client(m.terminal.kill))
      .onRequest(m.terminal.release, client(m.terminal.release))
      .onRequest(m.elicitation.create, client(m.elicitation.create))
      .onRequest("*", ({ method, params }) => this.onClientRequest(method, params))
      // Updates are recorded by the tee, in wire order; the SDK's own dispatch is not awaited in order.
      .onNotification(m.session.update, () => undefined)
      .onNotification("*", () => undefined);

    const input = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.sdkInput = controller;
      },
    });
    const output = new WritableStream<Uint8Array>({
      write: (chunk) => this.writeLines(Buffer.from(chunk), "sdk"),
    });
    return app.connect(acp.ndJsonStream(output, input));
  }

  private onAgentLine(line: string): void {
    this.stdoutLines.push(line);
    this.checker.fromAgent(line);
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      // Not forwarded: the SDK would answer the agent with -32700 and muddy the exchange under test.
      // The checker has recorded it, so assertCleanWire fails.
      this.tick();
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      this.messages.push(msg);
      this.tick();
      return;
    }
    this.messages.push(msg);

    const isCall = typeof msg.method === "string";
    const hasId = "id" in msg;
    let forward = true;
    if (isCall && !hasId && msg.method === "session/update" && msg.params && typeof msg.params === "object") {
      this.updates.push({ sessionId: msg.params.sessionId, update: msg.params.update });
    } else if (isCall && hasId) {
      this.agentRequests.push({ id: msg.id, method: msg.method, params: msg.params });
      if (this.options.raw) void this.answerAsHarness(msg);
    } else if (!isCall && hasId) {
      const key = idKey(msg.id);
      const mine = this.harnessPending.get(key);
      if (mine) {
        this.harnessPending.delete(key);
        if ("error" in msg) mine.reject(toRequestError(msg.error));
        else mine.resolve(msg.result);
      }
      if (this.rawPending.delete(key) || msg.id === null) {
        // The SDK never sends these ids; fed to it they only print "response to unknown request".
        forward = false;
      } else {
        this.sdkPending.delete(key);
      }
    }
    if (forward && this.sdkInput) {
      try {
        this.sdkInput.enqueue(Buffer.from(line + "\n", "utf8"));
      } catch {
        // the SDK closed its side (connection error or close()); the tee keeps recording
      }
    }
    this.tick();
  }

  private writeLines(data: string | Buffer, source: Source): Promise<void> {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let rest = this.stdinRest.length > 0 ? Buffer.concat([this.stdinRest, bytes]) : bytes;
    const lines: string[] = [];
    let nl: number;
    while ((nl = rest.indexOf(0x0a)) !== -1) {
      lines.push(rest.subarray(0, nl).toString("utf8"));
      rest = rest.subarray(nl + 1);
    }
    for (const line of lines) this.noteClientLine(line, source);
    this.stdinRest = Buffer.from(rest);
    return this.deliver(bytes);
  }

  private noteClientLine(line: string, source: Source): void {
    this.stdinLines.push(line);
    this.checker.fromClient(line);
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (!msg || typeof msg !== "object" || Array.isArray(msg) || !("id" in msg) || "result" in msg || "error" in msg) return;
    const key = idKey(msg.id);
    if (source === "sdk") {
      if (this.rawPending.has(key)) {
        this.wireProblems.push(`harness: rpc request id ${key} collides with an open raw request; use string ids in writeRaw`);
      }
      this.sdkPending.add(key);
    } else if (source === "raw") {
      if (this.sdkPending.has(key) || this.harnessPending.has(key)) {
        this.wireProblems.push(`harness: raw request id ${key} collides with an open rpc request; use string ids in writeRaw`);
      }
      this.rawPending.add(key);
    } else if (this.rawPending.has(key)) {
      this.wireProblems.push(`harness: rpc request id ${key} collides with an open raw request; use string ids in writeRaw`);
    }
  }

  private harnessRequest(method: string, params: unknown): Promise<any> {
    const id = this.nextHarnessId++;
    return new Promise((resolve, reject) => {
      this.harnessPending.set(idKey(id), { resolve, reject });
      this.writeLines(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n", "harness").catch((err: unknown) => {
        this.harnessPending.delete(idKey(id));
        reject(err);
      });
    });
  }

  private async answerAsHarness(msg: { id: unknown; method: string; params: unknown }): Promise<void> {
    let response: object;
    try {
      const result =
        msg.method === acp.methods.client.session.requestPermission ? await this.onPermission(msg.params) : await this.onClientRequest(msg.method, msg.params);
      response = { jsonrpc: "2.0", id: msg.id, result: result ?? {} };
    } catch (err) {
      response = { jsonrpc: "2.0", id: msg.id, error: toRpcError(err) };
    }
    if (this.exitInfo) return;
    await this.writeLines(JSON.stringify(response) + "\n", "harness").catch(() => undefined);
  }

  private withTimeout<T>(method: string, promise: Promise<T>, options?: RequestOptions): Promise<T> {
    const timeoutMs = options?.timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_REQUEST_MS;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no response within ${timeoutMs} ms${this.diagnostics()}`)), timeoutMs);
      promise.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          // JSON-RPC errors from the agent are the result under test; a dead connection needs context.
          if (err instanceof acp.RequestError) reject(err);
          else reject(new Error(`${method}: ${err instanceof Error ? err.message : String(err)}${this.diagnostics()}`, { cause: err }));
        },
      );
    });
  }

  private waitFor<T>(what: string, timeoutMs: number, find: () => { value: T } | undefined): Promise<T> {
    const found = find();
    if (found) return Promise.resolve(found.value);
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.tickListeners.delete(check);
      };
      const check = () => {
        const hit = find();
        if (hit) {
          done();
          resolve(hit.value);
        } else if (this.exitInfo) {
          done();
          reject(new Error(`agent exited before the expected ${what} arrived${this.diagnostics()}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching ${what} within ${timeoutMs} ms${this.diagnostics()}`));
      }, timeoutMs);
      this.tickListeners.add(check);
      if (this.exitInfo) check();
    });
  }

  protected tick(): void {
    for (const listener of [...this.tickListeners]) listener();
  }

  private afterExit(): void {
    const err = new Error("agent exited before answering");
    for (const pending of this.harnessPending.values()) pending.reject(err);
    this.harnessPending.clear();
    this.sdk?.close();
    agentsByHome.get(this.options.home)?.delete(this);
    this.tick();
  }
}

/** The real `reasonix acp` shim as a child process, the SDK client on its stdio. */
export class AgentProcess extends Agent {
  readonly child: ChildProcess;

  private constructor(options: AgentOptions) {
    super(options);
    const argv = options.command ?? [process.execPath, BIN, "acp", ...(options.args ?? [])];
    // As an editor with this umask would start it: the shim's own process reads it.
    const [command, ...commandArgs] =
      options.umask === undefined ? argv : ["/bin/sh", "-c", `umask ${options.umask.toString(8).padStart(4, "0")} && exec "$0" "$@"`, ...argv];
    this.child = spawn(command!, commandArgs, {
      cwd: options.cwd ?? process.cwd(),
      env: agentEnv(options),
      stdio: ["pipe", "pipe", "pipe"],
      detached: options.detached ?? false,
    });
    const child = this.child;

    child.stdin!.on("error", (err) => {
      // EPIPE after the agent died is expected in fault tests; the exit is what they assert on.
      if (VERBOSE) process.stderr.write(`[harness] agent stdin: ${err.message}\n`);
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (text: string) => {
      this.stderrText += text;
      if (VERBOSE) process.stderr.write(text);
      this.tick();
    });
    child.stdout!.on("data", (chunk: Buffer) => this.fromAgent(chunk));
    child.stdout!.on("end", () => this.agentOutputEnded());

    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      this.finish({ code, signal });
    };
    child.on("close", finish);
    child.on("exit", (code, signal) => {
      // 'close' waits for stdout to end; if a grandchild inherited it, that never happens.
      setTimeout(() => {
        if (!settled) {
          this.wireProblems.push("stdout stayed open 2 s after the agent process exited: a child process inherited it");
          finish(code, signal);
        }
      }, 2000).unref();
    });
    child.on("error", (err) => {
      this.stderrText += `\n[harness] spawn failed: ${err.message}\n`;
      finish(null, null);
    });
  }

  static spawn(options: AgentOptions): AgentProcess {
    return new AgentProcess(options);
  }

  /** Ends stdin (the editor closing) and resolves with the exit code. */
  closeStdin(timeoutMs?: number): Promise<number | null> {
    this.child.stdin!.end();
    return this.exitWithin(timeoutMs, "of stdin closing");
  }

  async kill(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.exitStatus) return;
    this.child.kill(signal);
    await this.exited;
  }

  closeStdout(): void {
    this.child.stdout!.destroy();
  }

  protected deliver(bytes: Buffer): Promise<void> {
    const stdin = this.child.stdin!;
    if (stdin.destroyed || stdin.writableEnded) {
      return Promise.reject(new Error("agent stdin is closed"));
    }
    return new Promise((resolve, reject) => {
      stdin.write(bytes, (err) => (err ? reject(err) : resolve()));
    });
  }
}

/** The environment a shim started by an editor with these options would have. */
export function agentEnv(options: AgentOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // DEEPSEEK_* and REASONIX_* from the developer's shell would leak a real provider or home in;
    // NODE_TEST_CONTEXT would make a node:test-using child report to our runner.
    if (key.startsWith("DEEPSEEK_") || key.startsWith("REASONIX_") || key === "NODE_TEST_CONTEXT") continue;
    env[key] = value;
  }
  env.REASONIX_HOME = options.home;
  // A test's first turn means to have its MCP servers' tools: two suites side by side once took a
  // Node MCP server past the default 15 s wait (the model then read "no tool named mcp__…"). A test
  // about a late server sets its own.
  env.REASONIX_MCP_START_SECONDS = "120";
  if (options.model) {
    env.DEEPSEEK_BASE_URL = options.model.url;
    env.DEEPSEEK_API_KEY = TEST_API_KEY;
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

function defaultPermission(params: any): object {
  const options: any[] = Array.isArray(params?.options) ? params.options : [];
  const choice = options.find((o) => o?.kind === "allow_once") ?? options[0];
  return choice ? { outcome: { outcome: "selected", optionId: choice.optionId } } : { outcome: { outcome: "cancelled" } };
}

function toRpcError(err: unknown): { code: number; message: string; data?: unknown } {
  if (err instanceof acp.RequestError) {
    return err.data === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, data: err.data };
  }
  return { code: -32603, message: "Internal error", data: { details: err instanceof Error ? err.message : String(err) } };
}

function toRequestError(error: any): acp.RequestError {
  const code = typeof error?.code === "number" ? error.code : -32603;
  const message = typeof error?.message === "string" ? error.message : "malformed error response";
  return new acp.RequestError(code, message, error?.data);
}

function idKey(id: unknown): string {
  return JSON.stringify(id) ?? "undefined";
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
