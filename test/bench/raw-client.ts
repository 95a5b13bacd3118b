/**
 * A lean NDJSON client over a spawned `reasonix acp`, for measurements: no schema checks or SDK on
 * the hot path, so the figures are the agent's and not the test client's.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { BIN } from "../support/harness.js";

interface Waiter {
  resolve(v: any): void;
  reject(e: Error): void;
}

export class RawClient {
  readonly child: ChildProcess;
  notifications = 0;
  /** Sees every notification line as it arrives (order checks). */
  onNotification: ((line: string) => void) | undefined;
  private rest = "";
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [BIN, "acp"], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "ignore"] });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (c: string) => this.onData(c));
    this.child.once("exit", () => {
      for (const w of this.waiting.values()) w.reject(new Error("agent exited"));
    });
  }

  private onData(chunk: string): void {
    this.rest += chunk;
    let nl: number;
    while ((nl = this.rest.indexOf("\n")) !== -1) {
      const line = this.rest.slice(0, nl);
      this.rest = this.rest.slice(nl + 1);
      if (line.startsWith('{"jsonrpc":"2.0","method"')) {
        this.notifications++;
        this.onNotification?.(line);
        continue;
      }
      const msg = JSON.parse(line);
      if (msg.method) {
        // Agent requests: allow everything, as a trusting editor would.
        const option = msg.params?.options?.[0]?.optionId;
        this.child.stdin!.write(
          `${JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { outcome: option ? { outcome: "selected", optionId: option } : { outcome: "cancelled" } } })}\n`,
        );
        continue;
      }
      const w = this.waiting.get(msg.id);
      if (!w) continue;
      this.waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(`${msg.error.code} ${msg.error.message}`));
      else w.resolve(msg.result);
    }
  }

  request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.stdin!.end();
    await exited;
  }
}
