/**
 * Any ACP agent over stdio, for measurements: NDJSON in and out, the bytes each way counted, agent
 * requests answered as a trusting editor would (the first option), and the CPU time of the agent's
 * whole process tree readable at any moment.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

interface Waiter {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

/** How every notification's text starts as this project and the SDK write it; both clients hand those on unparsed. */
export const NOTIFICATION_HEAD = '{"jsonrpc":"2.0","method"';

export class AcpProcess {
  readonly child: ChildProcess;
  readonly started = process.hrtime.bigint();
  bytesIn = 0;
  bytesOut = 0;
  stderr = "";
  /** Each notification's line as received. */
  onNotification: ((line: string) => void) | undefined;
  private rest = "";
  private nextId = 1;
  private readonly waiting = new Map<number, Waiter>();

  constructor(command: string, args: string[], env: Record<string, string | undefined>, cwd?: string) {
    this.child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"], ...(cwd ? { cwd } : {}) });
    this.child.stdout!.setEncoding("utf8");
    this.child.stdout!.on("data", (c: string) => this.onData(c));
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (c: string) => {
      if (this.stderr.length < 8000) this.stderr += c;
    });
    this.child.stdin!.on("error", () => undefined);
    this.child.once("exit", (code, signal) => {
      const why = `agent exited (${signal ?? code})${this.stderr ? `: ${lastLine(this.stderr)}` : ""}`;
      for (const w of this.waiting.values()) w.reject(new Error(why));
      this.waiting.clear();
    });
    this.child.once("error", (err) => {
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    });
  }

  private onData(chunk: string): void {
    this.bytesOut += Buffer.byteLength(chunk);
    this.rest += chunk;
    let nl: number;
    while ((nl = this.rest.indexOf("\n")) !== -1) {
      const line = this.rest.slice(0, nl);
      this.rest = this.rest.slice(nl + 1);
      if (!line.trim()) continue;
      // As the direct client does (ws-direct.ts): a notification is handed on as its text, unparsed,
      // so both sides of the shim comparison do the same work per message.
      if (line.startsWith(NOTIFICATION_HEAD)) {
        this.onNotification?.(line);
        continue;
      }
      let msg: any;
      try {
        msg = JSON.parse(line);
      } catch {
        continue; // not ACP; a peer's stray output
      }
      if (msg.method && msg.id !== undefined) {
        const option = msg.params?.options?.[0]?.optionId;
        this.write({ jsonrpc: "2.0", id: msg.id, result: { outcome: option ? { outcome: "selected", optionId: option } : { outcome: "cancelled" } } });
      } else if (msg.method) {
        this.onNotification?.(line);
      } else {
        const w = this.waiting.get(msg.id);
        if (!w) continue;
        this.waiting.delete(msg.id);
        if (msg.error) w.reject(new Error(`${msg.error.code} ${msg.error.message}${msg.error.data ? ` ${JSON.stringify(msg.error.data).slice(0, 300)}` : ""}`));
        else w.resolve(msg.result);
      }
    }
  }

  private write(msg: unknown): void {
    const text = `${JSON.stringify(msg)}\n`;
    this.bytesIn += Buffer.byteLength(text);
    this.child.stdin!.write(text);
  }

  request<T = any>(method: string, params: unknown, timeoutMs = 60_000): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs / 1000} s${this.stderr ? ` (stderr: ${lastLine(this.stderr)})` : ""}`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** Milliseconds since the spawn. */
  sinceSpawn(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e6;
  }

  /** CPU ms of the agent and every process under it, now. */
  treeCpuMs(): number {
    return this.child.pid ? treeCpuMs(this.child.pid) : 0;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  }
}

function lastLine(text: string): string {
  return text.trim().split("\n").filter(Boolean).slice(-2).join(" | ").slice(0, 300);
}

/** utime+stime of `root` and its descendants, from /proc (Linux). */
export function treeCpuMs(root: number): number {
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc").filter((e) => /^\d+$/.test(e));
  } catch {
    return 0;
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(e), Number(f[1]));
      cpu.set(Number(e), (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  for (const [pid, ms] of cpu) {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 50; p = parent.get(p), hops++) {
      if (p === root) {
        total += ms;
        break;
      }
    }
  }
  return total;
}

/** Resident memory (VmRSS, MB) of `root` and its descendants, from /proc (Linux). */
export function treeRssMb(root: number): number {
  let total = 0;
  for (const pid of [root, ...descendants(root)]) {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
      total += kb / 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const e of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid), hops = 0; p !== undefined && p > 1 && hops < 50; p = parent.get(p), hops++) {
      if (p === root) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}
