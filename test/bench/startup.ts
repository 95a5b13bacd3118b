/**
 * Startup benchmark: time from spawning `reasonix acp` to the `initialize` answer on its stdout and
 * to the `session/new` answer, with a warm daemon and with none (cold start), beside the floor of a
 * bare `node` start; and the daemon's resident memory once idle after a cold start. Every process
 * runs without NODE_EXTRA_CA_CERTS (issue 25): with it, each node start parses a certificate bundle
 * that hides our own cost.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BIN, daemonPid, stopDaemon, TEST_API_KEY } from "../support/harness.js";
import { nodeFloor } from "./machine.js";
import { summarize, type Row } from "./stats.js";

const line = (id: number, method: string, params: unknown): string => `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
const INIT = line(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });

const ENV: NodeJS.ProcessEnv = { ...process.env, DEEPSEEK_API_KEY: TEST_API_KEY };
delete ENV.NODE_EXTRA_CA_CERTS;

/** A pause between starts of the warm rows. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 100));

/** How long an idle daemon is left before its memory is read: start-up garbage has had time to go. */
const IDLE_SETTLE_MS = 2000;

/**
 * Milliseconds from spawn to the answer of `initialize` and, with `cwd`, of the `session/new` sent
 * right after it; the process is then closed.
 */
function timeToAnswers(home: string, cwd?: string): Promise<{ initialize: number; session?: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [BIN, "acp"], { env: { ...ENV, REASONIX_HOME: home }, stdio: ["pipe", "pipe", "ignore"] });
    const times: { initialize: number; session?: number } = { initialize: NaN };
    let out = "";
    const finish = (): void => {
      child.stdin.end();
      child.once("exit", () => resolve(times));
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => {
      out += c;
      for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
        const msg = JSON.parse(out.slice(0, nl)) as { id?: number; result?: { protocolVersion?: number; sessionId?: string } };
        out = out.slice(nl + 1);
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (msg.id === 1) {
          if (msg.result?.protocolVersion !== 1) return reject(new Error(`unexpected answer: ${JSON.stringify(msg)}`));
          times.initialize = ms;
          if (cwd === undefined) return finish();
          child.stdin.write(line(2, "session/new", { cwd, mcpServers: [] }));
        } else if (msg.id === 2) {
          if (!msg.result?.sessionId) return reject(new Error(`unexpected answer: ${JSON.stringify(msg)}`));
          times.session = ms;
          return finish();
        }
      }
    });
    child.once("error", reject);
    child.stdin.write(INIT);
  });
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
}

/** The daemon bundle's V8 code cache (bin/code-cache.js). */
const CODE_CACHE = join(dirname(BIN), "..", "dist", "daemon-run.cjs.cache");

/**
 * The first daemon after an install (or a rebuild) compiles its bundle and writes the code cache
 * 3 s after it starts serving; every later cold start reads it. The cold rows below measure those
 * later starts, as users meet them: this is the one start before them, without a cache, measured too.
 */
async function firstStartAfterInstall(): Promise<number> {
  rmSync(CODE_CACHE, { force: true });
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  try {
    const { initialize } = await timeToAnswers(home);
    for (let i = 0; i < 100 && !existsSync(CODE_CACHE); i++) await new Promise((r) => setTimeout(r, 100));
    return initialize;
  } finally {
    await stopDaemon(home);
    rmSync(home, { recursive: true, force: true });
  }
}

export async function startupBench(runs: { cold: number; warm: number }): Promise<Row[]> {
  const bare: number[] = [];
  const first = await firstStartAfterInstall();
  const cold: number[] = [];
  const idleRss: number[] = [];
  for (let i = 0; i < runs.cold; i++) {
    const home = mkdtempSync(join(tmpdir(), "rx-b-"));
    try {
      cold.push((await timeToAnswers(home)).initialize);
      await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
      idleRss.push(rssMiB(daemonPid(home)!));
    } finally {
      await stopDaemon(home);
      rmSync(home, { recursive: true, force: true });
    }
  }

  const warm: number[] = [];
  const warmSession: number[] = [];
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  const workdir = mkdtempSync(join(tmpdir(), "rx-bw-"));
  try {
    await timeToAnswers(home); // starts the daemon
    // The floor interleaved with the warm starts: the machine's load moves both alike.
    for (let i = 0; i < runs.warm; i++) {
      // Each start from a quiet machine: the daemon's work after the last window closed (detaching,
      // unloading its session, the log) is not counted against the floor, nor one start's exit against the next.
      await settle();
      bare.push(await nodeFloor({ line: true, env: ENV }));
      await settle();
      const t = await timeToAnswers(home, workdir);
      warm.push(t.initialize);
      warmSession.push(t.session!);
    }
  } finally {
    await stopDaemon(home);
    rmSync(home, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
  const floor = summarize("", bare, undefined).median;
  const times = (k: number): number => Math.round(k * floor * 10) / 10;
  return [
    summarize("bare `node -e` start (floor)", bare, undefined),
    summarize("reasonix acp → initialize, warm daemon (target 1.3× the floor)", warm, times(1.3)),
    summarize("reasonix acp → session/new answered, warm daemon (target 1.4× the floor)", warmSession, times(1.4)),
    summarize("reasonix acp → initialize, cold (no daemon; target 8× the floor)", cold, times(8)),
    summarize("  the first cold start after an install, before the code cache is written", [first], undefined),
    summarize(`idle daemon resident memory, ${IDLE_SETTLE_MS / 1000} s after a cold start's window closed`, idleRss, 70, "MiB"),
  ];
}
