/**
 * One end-to-end test's world: a temporary REASONIX_HOME, a scripted model, a workspace folder and a
 * spawned `reasonix acp` with the SDK client attached. Teardown checks the wire was clean (stdout held
 * only schema-valid JSON-RPC) and stops the daemon.
 */
import type { TestContext } from "node:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { AgentProcess, BIN, makeHome, type AgentOptions, type TestHome } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";

export interface World {
  home: TestHome;
  model: ScriptedModel;
  workdir: string;
  agents: AgentProcess[];
  /** Spawns another shim on the same home (and model), tracked for teardown. */
  spawn(extra?: Partial<AgentOptions>): AgentProcess;
  /** Another window on an existing session: a new shim, initialized, attached with session/resume. */
  window(sessionId: string, extra?: Partial<AgentOptions>): Promise<AgentProcess>;
}

export async function world(
  t: TestContext,
  { prepare, ...opts }: Partial<AgentOptions> & { noModel?: boolean; prepare?: (home: string) => void | Promise<void> } = {},
): Promise<World & { agent: AgentProcess }> {
  const home = await makeHome();
  // Runs on the fresh home before the first shim starts (it starts the daemon at once).
  await prepare?.(home.dir);
  const model = await ScriptedModel.start();
  const workdir = realpathSync(mkdtempSync(join(tmpdir(), "rx-ws-")));
  const agents: AgentProcess[] = [];
  const spawn = (extra: Partial<AgentOptions> = {}): AgentProcess => {
    const a = AgentProcess.spawn({ home: home.dir, ...(opts.noModel ? {} : { model }), cwd: workdir, ...opts, ...extra });
    agents.push(a);
    return a;
  };
  const window = async (sessionId: string, extra: Partial<AgentOptions> = {}): Promise<AgentProcess> => {
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

/** `reasonix daemon status` for a home, parsed: what an operator would see. */
export function daemonStatus(home: string): any {
  return JSON.parse(execFileSync(process.execPath, [BIN, "daemon", "status"], { env: { ...process.env, REASONIX_HOME: home } }).toString());
}
