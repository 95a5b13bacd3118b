/**
 * Startup benchmark: time from spawning `reasonix acp` to the `initialize` answer on its stdout,
 * with a warm daemon and with none (cold start), beside the floor of a bare `node` start.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN } from "../support/harness.js";
import { stopDaemon } from "../support/harness.js";
import { summarize, type Row } from "./stats.js";

const INIT = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;

/** Milliseconds from spawn to the first stdout line of the answer; the process is then closed. */
function timeToInitialize(home: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [BIN, "acp"], {
      env: { ...process.env, REASONIX_HOME: home },
      stdio: ["pipe", "pipe", "ignore"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => {
      out += c;
      if (out.includes("\n")) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (!out.includes('"protocolVersion":1')) reject(new Error(`unexpected answer: ${out}`));
        child.stdin.end();
        child.once("exit", () => resolve(ms));
      }
    });
    child.once("error", reject);
    child.stdin.write(INIT);
  });
}

function timeBareNode(): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ["-e", "process.stdout.write('x\\n')"], { stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.once("data", () => resolve(Number(process.hrtime.bigint() - started) / 1e6));
    child.once("error", reject);
  });
}

export async function startupBench(runs: { cold: number; warm: number }): Promise<Row[]> {
  const bare: number[] = [];
  for (let i = 0; i < runs.warm; i++) bare.push(await timeBareNode());

  const cold: number[] = [];
  for (let i = 0; i < runs.cold; i++) {
    const home = mkdtempSync(join(tmpdir(), "rx-b-"));
    try {
      cold.push(await timeToInitialize(home));
    } finally {
      await stopDaemon(home);
      rmSync(home, { recursive: true, force: true });
    }
  }

  const warm: number[] = [];
  const home = mkdtempSync(join(tmpdir(), "rx-b-"));
  try {
    await timeToInitialize(home); // starts the daemon
    for (let i = 0; i < runs.warm; i++) warm.push(await timeToInitialize(home));
  } finally {
    await stopDaemon(home);
    rmSync(home, { recursive: true, force: true });
  }
  return [
    summarize("bare `node -e` start (floor)", bare, undefined),
    summarize("reasonix acp → initialize, warm daemon", warm, 150),
    summarize("reasonix acp → initialize, cold (no daemon)", cold, 1000),
  ];
}
