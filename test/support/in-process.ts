/**
 * The in-process connector (DESIGN §9): the daemon is created inside the test process by the same createDaemon `reasonix daemon run` uses (real LevelDB in
 * the test's REASONIX_HOME, the real fastify app on its Unix socket, which `reasonix daemon status` reaches), and each window is the shim itself: `runAcp`
 * (shim/acp.ts) on streams in memory instead of stdio, joining that daemon over its socket with the shim's own WebSocket client and upgrade. Only what a shim
 * process is (its start, the daemon spawned through the ready pipe, a build handover, real pipes) needs the process connector.
 */
import { readFileSync } from "node:fs";
import { PassThrough, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { createDaemon, type Daemon } from "../../daemon/main.js";
import { AlreadyRunningError, StartupError } from "../../daemon/startup.js";
import { daemonEnvironment } from "../../shared/environment.js";
import { resolvePaths } from "../../shared/paths.js";
import { parseAcpArgs, runAcp, type ShimRun } from "../../shim/acp.js";
import { assertTrustedSocket, DaemonUnavailableError, openSocket, unixDaemon, type DaemonLink, type WindowOptions } from "../../shim/connect.js";
import { Agent, agentEnv, inProcessDaemons, type AgentOptions } from "./harness.js";

/** Daemons, one per home, started by the first window that needs one (as a shim would); `rising`: homes whose daemon is starting (shim/rejoin.ts). */
const daemons = new Map<string, Promise<Daemon>>();
const rising = new Set<string>();

/** The home's running daemon, else one created with the environment of the window that starts it. */
async function daemonFor(home: string, env: NodeJS.ProcessEnv): Promise<Daemon> {
  const known = daemons.get(home);
  const daemon = await known?.catch(() => undefined);
  if (daemon && !daemon.state.draining) return daemon;
  await daemon?.closed;
  // Another window may have started the next daemon while this one waited.
  if (daemons.get(home) !== known) return daemonFor(home, env);
  // What a shim gives the daemon it starts (shim/connect.ts startDaemon): the kept names, no secret.
  const created = createDaemon({ paths: resolvePaths(env), env: daemonEnvironment(env) });
  daemons.set(home, created);
  inProcessDaemons.set(home, { stop: async () => void (await (await created.catch(() => undefined))?.close("stopped by the test")) });
  const forget = (): void => {
    if (daemons.get(home) !== created) return;
    daemons.delete(home);
    inProcessDaemons.delete(home);
  };
  rising.add(home);
  created.then((d) => void d.closed.then(forget), forget).finally(() => rising.delete(home));
  return created;
}

/** The way the shim's unit reaches a daemon in this process: started on the first join, watched through `closed`. */
function inProcessDaemon(home: string, env: NodeJS.ProcessEnv, opts: WindowOptions): DaemonLink {
  const paths = resolvePaths(env);
  let joined: Daemon | undefined;
  return {
    ...unixDaemon(paths, opts),
    async open(autostart, first) {
      assertTrustedSocket(paths);
      try {
        joined = autostart ? await daemonFor(home, env) : await daemons.get(home)?.catch(() => undefined);
      } catch (err) {
        if (err instanceof StartupError) throw new DaemonUnavailableError(err.message, err.reason);
        // A daemon of another process holds the store: it answers on the socket.
        if (!(err instanceof AlreadyRunningError)) throw err;
      }
      return openSocket(paths, { ...opts, first });
    },
    stillRunningAfter: (ms) => Promise.race([sleep(ms, true), joined?.closed.then(() => false) ?? false]),
    starting: () => rising.has(home),
  };
}

/** This process's umask, read without setting it: `process.umask()` sets it twice, racing the daemon's threads here. */
const ownUmask = (): number => Number.parseInt(/^Umask:\s*([0-7]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))![1]!, 8);

/**
 * One editor window: the shim's unit between the client and the in-process daemon. closeStdin() is the window leaving (its input ends), kill() the window dying.
 */
export class InProcessAgent extends Agent {
  private readonly input = new PassThrough();
  private readonly shim: ShimRun;
  private outputClosed = false;

  private constructor(options: AgentOptions) {
    super(options);
    if (options.command || options.detached) throw new Error('in-process connector: "command" and "detached" need { connector: "process" }');
    const env = agentEnv(options);
    const window = { model: parseAcpArgs(options.args ?? []).model, umask: options.umask ?? ownUmask(), env };
    // A pipe's capacity: past it the shim stops reading the daemon, as it does behind a slow editor.
    const output = new Writable({
      highWaterMark: 64 * 1024,
      write: (chunk: Buffer, _encoding, done) => {
        if (this.outputClosed) return done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
        this.fromAgent(chunk);
        done();
      },
    });
    const stderr = (text: string): void => void (this.stderrText += text);
    this.shim = runAcp({ input: this.input, output, stderr, daemon: inProcessDaemon(options.home, env, window) });
    void this.shim.exited.then((code) => this.finish({ code, signal: null }));
  }

  static spawn(options: AgentOptions): InProcessAgent {
    return new InProcessAgent(options);
  }

  closeStdin(timeoutMs?: number): Promise<number | null> {
    this.input.end();
    return this.exitWithin(timeoutMs, "of its input closing");
  }

  async kill(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.exitStatus) return;
    this.shim.kill();
    this.finish({ code: null, signal });
  }

  closeStdout(): void {
    this.outputClosed = true;
  }

  protected deliver(bytes: Buffer): Promise<void> {
    if (this.input.writableEnded || this.exitStatus) return Promise.reject(new Error("agent stdin is closed"));
    return new Promise((resolve, reject) => this.input.write(bytes, (err) => (err ? reject(err) : resolve())));
  }
}
