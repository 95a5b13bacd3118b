/**
 * The editor's side of `fs/*` and `terminal/*`, as a real editor would implement them: buffers that
 * may differ from disk, and terminals that run real processes. It records every call so tests can
 * check that the agent created, waited on and released what it used.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Agent } from "./harness.js";

interface Terminal {
  child: ChildProcess;
  output: string;
  exit: { exitCode: number | null; signal: string | null } | undefined;
  exited: Promise<void>;
  released: boolean;
}

export class FakeEditor {
  /** Unsaved buffers by absolute path; reads fall back to disk like an editor opening the file. */
  readonly buffers = new Map<string, string>();
  readonly calls: Array<{ method: string; params: any }> = [];
  /**
   * Methods that misbehave: `fail` answers a JSON-RPC error (the cause in `data`),
   * `hang` never answers, `garbage` answers a result of the wrong shape.
   */
  readonly faults = new Map<string, "fail" | "hang" | "garbage">();
  /** How terminal/kill and release end a command: its process group (as most editors do) or its pid only (as some do). */
  killMode: "group" | "pid" = "group";
  /** What this editor's terminals start with, before a terminal/create's `env` (a real editor's own, which its agent's window has too). */
  terminalEnv: NodeJS.ProcessEnv = process.env;
  private readonly terminals = new Map<string, Terminal>();
  private next = 0;

  attach(agent: Agent): void {
    agent.onClientRequest = (method, params) => this.handle(method, params);
  }

  terminal(id: string): Terminal | undefined {
    return this.terminals.get(id);
  }

  get liveTerminals(): number {
    return [...this.terminals.values()].filter((t) => !t.released).length;
  }

  async handle(method: string, params: any): Promise<unknown> {
    this.calls.push({ method, params });
    const fault = this.faults.get(method);
    // The SDK answers a thrown error as "Internal error" with the message in data.details, as editors do.
    if (fault === "fail") throw new Error(`the editor could not do ${method}`);
    if (fault === "hang") return new Promise(() => undefined);
    if (fault === "garbage") return { content: 42, terminalId: ["no"], output: null, exitCode: "zero", truncated: "maybe" };
    switch (method) {
      case "fs/read_text_file": {
        const text = this.buffers.get(params.path) ?? readFileSync(params.path, "utf8");
        return { content: text };
      }
      case "fs/write_text_file":
        this.buffers.set(params.path, params.content);
        return {};
      case "terminal/create": {
        const id = `term-${this.next++}`;
        const env = { ...this.terminalEnv };
        for (const v of params.env ?? []) env[v.name] = v.value;
        const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
        const t: Terminal = { child, output: "", exit: undefined, exited: Promise.resolve(), released: false };
        child.stdout!.on("data", (c: Buffer) => (t.output += c.toString()));
        child.stderr!.on("data", (c: Buffer) => (t.output += c.toString()));
        t.exited = new Promise((resolve) =>
          child.once("exit", (code, signal) => {
            t.exit = { exitCode: code, signal };
            resolve();
          }),
        );
        this.terminals.set(id, t);
        return { terminalId: id };
      }
      case "terminal/wait_for_exit": {
        const t = this.get(params.terminalId);
        await t.exited;
        return t.exit;
      }
      case "terminal/output": {
        const t = this.get(params.terminalId);
        return { output: t.output, truncated: false, ...(t.exit ? { exitStatus: t.exit } : {}) };
      }
      case "terminal/kill": {
        const t = this.get(params.terminalId);
        if (!t.exit) this.kill(t);
        return {};
      }
      case "terminal/release": {
        const t = this.get(params.terminalId);
        if (!t.exit) this.kill(t);
        t.released = true;
        return {};
      }
      default:
        throw Object.assign(new Error(`method not found: ${method}`), { code: -32601 });
    }
  }

  private kill(t: Terminal): void {
    try {
      process.kill(this.killMode === "group" ? -t.child.pid! : t.child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }

  private get(id: string): Terminal {
    const t = this.terminals.get(id);
    if (!t || t.released) throw Object.assign(new Error(`unknown terminal ${id}`), { code: -32002 });
    return t;
  }
}
