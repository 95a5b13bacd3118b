/**
 * One end-to-end test's world: a temporary REASONIX_HOME, a scripted model, a workspace folder and a
 * window on the agent with the SDK client attached. Teardown checks the wire was clean (the agent's
 * side held only schema-valid JSON-RPC) and stops the daemon.
 *
 * Two connectors, one test body (DESIGN §9). By default the daemon runs inside the test process and
 * windows join it over its socket (support/in-process.ts); `{ connector: "process" }` spawns the
 * real `reasonix acp` shim, which starts a real daemon process, for tests where processes matter:
 * start-up, crashes, detaching, the shim's own behaviour, what the daemon process holds.
 */
import type { TestContext } from "node:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { AgentProcess, BIN, makeHome, type Agent, type AgentOptions, type TestHome } from "../support/harness.js";
import { InProcessAgent } from "../support/in-process.js";
import { ScriptedModel } from "../support/scripted-model.js";

const run = promisify(execFile);

export type Connector = "in-process" | "process";

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
export async function world(t: TestContext, { prepare, connector = "in-process", ...opts }: WorldOptions = {}): Promise<World> {
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
 * `reasonix daemon status` for a home, parsed: what an operator would see. Asynchronous, so a daemon
 * inside this process can answer while the command waits.
 */
export async function daemonStatus(home: string): Promise<any> {
  const { stdout } = await run(process.execPath, [BIN, "daemon", "status"], { env: { ...process.env, REASONIX_HOME: home } });
  return JSON.parse(stdout);
}
