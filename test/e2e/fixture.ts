/**
 * One end-to-end test's world: a temporary REASONIX_HOME, a scripted model, a workspace folder and a
 * window on the agent with the SDK client attached. Teardown checks the wire was clean (the agent's
 * side held only schema-valid JSON-RPC) and stops the daemon.
 *
 * Two connectors, one test body (DESIGN §9). In-process, the daemon runs inside the test process and
 * each window is the shim's unit on streams in memory (support/in-process.ts); the process connector
 * spawns the real `reasonix acp` shim, which starts a real daemon process. This file's `test`
 * registers a body once per connector; `processTest` one that needs processes (start-up, crashes,
 * detaching, what the daemon process holds); node:test's `test` with `world(t)` is in-process.
 */
import { test as nodeTest, type TestContext } from "node:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { AgentProcess, BIN, makeHome, type Agent, type AgentOptions, type TestHome } from "../support/harness.js";
import { daemonGet } from "../support/daemon-http.js";
import { InProcessAgent } from "../support/in-process.js";
import { ScriptedModel } from "../support/scripted-model.js";

const run = promisify(execFile);

export type Connector = "in-process" | "process";

/**
 * The connectors this run uses: both, unless REASONIX_TEST_CONNECTORS names fewer
 * (`npm run test:fast` sets it to in-process: the process runs are left out, not skipped).
 */
export const CONNECTORS: readonly Connector[] = (process.env.REASONIX_TEST_CONNECTORS ?? "in-process,process")
  .split(",")
  .filter((c): c is Connector => c === "in-process" || c === "process");

/** The connector a running test was registered for; world(t) uses it. */
const registeredFor = new WeakMap<TestContext, Connector>();

type Body = (t: TestContext) => Promise<void>;

function register(name: string, connector: Connector, body: Body): void {
  nodeTest(`${name} [${connector}]`, (t) => {
    registeredFor.set(t, connector);
    return body(t);
  });
}

/**
 * One test body through every connector, registered as "<name> [in-process]" and "<name> [process]":
 * the protocol-level files import this `test` in place of node:test's. A body that holds through one
 * connector only is registered with processTest, or with node:test's `test` (in-process), saying why.
 */
export function test(name: string, body: Body): void {
  for (const connector of CONNECTORS) register(name, connector, body);
}

/** A test that needs a shim or daemon process of its own: world(t) in it uses the process connector. */
export function processTest(name: string, body: Body): void {
  if (CONNECTORS.includes("process")) register(name, "process", body);
}

export interface WorldOptions extends Partial<AgentOptions> {
  noModel?: boolean;
  /**
   * Runs on the fresh home before the first window starts (it starts the daemon at once); the
   * scripted model is already listening, so config.json may name its address.
   */
  prepare?: (home: string, model: ScriptedModel) => void | Promise<void>;
  /** default "in-process" */
  connector?: Connector;
}

export interface World<A extends Agent = Agent> {
  home: TestHome;
  model: ScriptedModel;
  workdir: string;
  agents: A[];
  agent: A;
  /** Another window on the same home (and model), tracked for teardown. */
  spawn(extra?: Partial<AgentOptions>): A;
  /** Another window on an existing session: a new window, initialized, attached with session/resume. */
  window(sessionId: string, extra?: Partial<AgentOptions>): Promise<A>;
}

export async function world(t: TestContext, opts: WorldOptions & { connector: "process" }): Promise<World<AgentProcess>>;
export async function world(t: TestContext, opts?: WorldOptions): Promise<World>;
export async function world(t: TestContext, { prepare, connector: asked, ...opts }: WorldOptions = {}): Promise<World> {
  const registered = registeredFor.get(t);
  if (asked && registered && asked !== registered) throw new Error(`world(t, { connector: "${asked}" }) in a test registered for ${registered}`);
  const connector = asked ?? registered ?? "in-process";
  if (!CONNECTORS.includes(connector)) throw new Error(`this run leaves out the ${connector} connector: register the test with processTest`);
  const home = await makeHome();
  const model = await ScriptedModel.start();
  try {
    await prepare?.(home.dir, model);
  } catch (err) {
    await model.close();
    await home.cleanup();
    throw err;
  }
  const workdir = realpathSync(mkdtempSync(join(tmpdir(), "rx-ws-")));
  const agents: Agent[] = [];
  const spawn = (extra: Partial<AgentOptions> = {}): Agent => {
    const options: AgentOptions = { home: home.dir, ...(opts.noModel ? {} : { model }), cwd: workdir, ...opts, ...extra };
    const a = connector === "process" ? AgentProcess.spawn(options) : InProcessAgent.spawn(options);
    agents.push(a);
    return a;
  };
  const window = async (sessionId: string, extra: Partial<AgentOptions> = {}): Promise<Agent> => {
    const w = spawn(extra);
    await w.initialize();
    await w.rpc.request("session/resume", { sessionId, cwd: workdir, mcpServers: [] });
    return w;
  };
  const agent = spawn();
  t.after(async () => {
    try {
      for (const a of agents) a.assertCleanWire();
    } finally {
      for (const a of agents) await a.kill("SIGKILL").catch(() => undefined);
      await home.cleanup();
      await model.close();
      rmSync(workdir, { recursive: true, force: true });
    }
  });
  return { home, model, workdir, agents, spawn, window, agent };
}

/** Resolves when `p` settles or rejects with a named timeout, so a broken agent fails fast. */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The daemon's /status for a home, parsed: what `reasonix daemon status` prints, read over the
 * daemon's socket as that command reads it, without a process per read (tests poll it in loops).
 * Rejects when no daemon answers on the socket. Tests of the command itself spawn it
 * (`daemonStatusCommand`, daemon-life, setup).
 */
export async function daemonStatus(home: string): Promise<any> {
  return JSON.parse(await daemonGet(home, "/status"));
}

/** `reasonix daemon status` run as a process for a home, parsed. Asynchronous, so a daemon inside this process can answer. */
export async function daemonStatusCommand(home: string): Promise<any> {
  const { stdout } = await run(process.execPath, [BIN, "daemon", "status"], { env: { ...process.env, REASONIX_HOME: home } });
  return JSON.parse(stdout);
}

/**
 * session/load sent as raw JSON-RPC: the answer's error (if any) and the updates of that session it
 * replayed before answering, in order.
 */
export async function loadReplay(agent: Agent, sessionId: string, cwd: string): Promise<{ error?: any; updates: any[] }> {
  const from = agent.messages.length;
  const answer = await agent.rawRequest({ id: `load-${from}`, method: "session/load", params: { sessionId, cwd, mcpServers: [] } }, 15_000);
  const updates = agent.messages
    .slice(from, agent.messages.indexOf(answer))
    .filter((m) => m.method === "session/update" && m.params.sessionId === sessionId)
    .map((m) => m.params.update);
  return { error: answer.error, updates };
}

/** The updates a successful session/load replays before its answer. */
export async function replayOf(agent: Agent, sessionId: string, cwd: string): Promise<any[]> {
  const { error, updates } = await loadReplay(agent, sessionId, cwd);
  if (error) throw new Error(`session/load failed: ${JSON.stringify(error)}`);
  return updates;
}
