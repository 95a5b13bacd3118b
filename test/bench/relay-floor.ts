/**
 * The floor under the streaming benchmark's "daemon CPU per streamed chunk": the least a Node process
 * can spend to move one model chunk to a window. A relay in a process of its own reads the same
 * scripted model's event streams (the model worker of streaming.ts, same sessions, pace and chunks)
 * and writes each content delta to a window socket as one WebSocket text frame holding a
 * `session/update`, and does nothing else: no store, no session state, no ordering or usage. Two
 * readers: node:http (as an HTTP client library reads) and raw TCP (HTTP/1.1 and chunked transfer
 * coding decoded by hand, the least any reader can do). Each relay streams the load once unmeasured
 * (so its code is compiled, as the daemon's is in the row beside it) and then once measured.
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request, Agent } from "node:http";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath } from "node:url";
import { textFrame } from "../../daemon/server/ws-frames.js";

export type RelayReader = "raw" | "http";

export interface RelayFigures {
  chunks: number;
  cpuPerChunkUs: number;
  /** events the relay could not parse (a reader bug would show here, not as a low figure) */
  faults: number;
}

/** Server-sent events in, each content delta out as a session/update frame. */
class EventRelay {
  private text = "";
  chunks = 0;
  faults = 0;

  constructor(
    private readonly sessionId: string,
    private readonly window: Socket,
  ) {}

  push(piece: string): void {
    this.text += piece;
    for (let at = this.text.indexOf("\n\n"); at >= 0; at = this.text.indexOf("\n\n")) {
      const event = this.text.slice(0, at);
      this.text = this.text.slice(at + 2);
      if (!event.startsWith("data: ") || event === "data: [DONE]") continue;
      let content: unknown;
      try {
        content = (JSON.parse(event.slice(6)) as { choices?: Array<{ delta?: { content?: unknown } }> }).choices?.[0]?.delta?.content;
      } catch {
        this.faults++;
        continue;
      }
      if (typeof content !== "string" || content === "") continue;
      this.chunks++;
      const update = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: content }, messageId: "m-1" };
      this.window.write(textFrame(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: this.sessionId, update } })));
    }
  }
}

const body = (prompt: string): string => JSON.stringify({ model: "deepseek-v4-flash", stream: true, messages: [{ role: "user", content: prompt }] });

function viaHttp(url: URL, agent: Agent, prompt: string, relay: EventRelay): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: "/v1/chat/completions", method: "POST", agent, headers: { "content-type": "application/json" } },
      (res) => {
        res.setEncoding("utf8");
        res.on("data", (piece: string) => relay.push(piece));
        res.on("end", resolve);
      },
    );
    req.on("error", reject);
    req.end(body(prompt));
  });
}

/** HTTP/1.1 by hand: one connection per stream, the chunked transfer coding undone as it arrives. */
function viaRawTcp(url: URL, prompt: string, relay: EventRelay): Promise<void> {
  return new Promise((resolve, reject) => {
    const payload = body(prompt);
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
      );
    });
    const decoder = new StringDecoder("utf8");
    let buf: Buffer = Buffer.alloc(0);
    let inBody = false;
    // Bytes left in the current chunk; -1 while a chunk-size line is awaited.
    let left = -1;
    socket.on("data", (data: Buffer) => {
      buf = buf.length === 0 ? data : Buffer.concat([buf, data]);
      if (!inBody) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        buf = buf.subarray(end + 4);
        inBody = true;
      }
      for (;;) {
        if (left < 0) {
          const nl = buf.indexOf("\r\n");
          if (nl < 0) return;
          left = Number.parseInt(buf.subarray(0, nl).toString("latin1"), 16);
          buf = buf.subarray(nl + 2);
          if (left === 0) return void socket.end();
        }
        const take = Math.min(left, buf.length);
        if (take > 0) relay.push(decoder.write(buf.subarray(0, take)));
        buf = buf.subarray(take);
        left -= take;
        if (left > 0 || buf.length < 2) return;
        buf = buf.subarray(2); // the CRLF after a chunk
        left = -1;
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve());
  });
}

/** In the relay's process: two rounds of `sessions` streams, the second one measured. */
async function relayMain(reader: RelayReader, modelUrl: string, sinkPath: string, sessions: number, windowsN: number): Promise<RelayFigures> {
  const url = new URL(modelUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: sessions });
  const open = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect(sinkPath);
      socket.once("connect", () => resolve(socket)).once("error", reject);
    });
  const windows = await Promise.all(Array.from({ length: windowsN }, open));
  const round = async (prompt: (k: number) => string): Promise<EventRelay[]> => {
    const relays = Array.from({ length: sessions }, (_, k) => new EventRelay(`s-${k}`, windows[k % windowsN]!));
    await Promise.all(relays.map((relay, k) => (reader === "http" ? viaHttp(url, agent, prompt(k), relay) : viaRawTcp(url, prompt(k), relay))));
    return relays;
  };
  await round((k) => `warm ${k}`);
  const cpu0 = process.cpuUsage();
  const relays = await round((k) => `talk ${k}`);
  const cpu = process.cpuUsage(cpu0);
  const chunks = relays.reduce((a, r) => a + r.chunks, 0);
  for (const w of windows) w.destroy();
  agent.destroy();
  return { chunks, cpuPerChunkUs: (cpu.user + cpu.system) / Math.max(1, chunks), faults: relays.reduce((a, r) => a + r.faults, 0) };
}

/**
 * Runs one relay in a process of its own against `modelUrl` (which must answer "warm k" and
 * "talk k" as model-worker.ts does), with a sink process reading its windows.
 */
export async function relayFloor(reader: RelayReader, modelUrl: string, sessions: number, windowsN: number): Promise<RelayFigures> {
  const dir = mkdtempSync(join(tmpdir(), "rx-relay-"));
  const sinkPath = join(dir, "sink.sock");
  const sink = fork(fileURLToPath(import.meta.url), ["sink", sinkPath], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  try {
    await new Promise((r) => sink.once("message", r));
    const relay = fork(fileURLToPath(import.meta.url), ["relay", reader, modelUrl, sinkPath, String(sessions), String(windowsN)], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    return await new Promise<RelayFigures>((resolve, reject) => {
      relay.once("message", (m) => resolve(m as RelayFigures));
      relay.once("exit", (code) => reject(new Error(`the ${reader} relay exited (${code}) without its figures`)));
    });
  } finally {
    sink.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send) {
  const [role, ...args] = process.argv.slice(2);
  if (role === "sink") {
    createServer((c) => c.on("data", () => undefined).on("error", () => undefined)).listen(args[0], () => process.send!("ready"));
  } else if (role === "relay") {
    const [reader, modelUrl, sinkPath, sessions, windowsN] = args;
    const figures = await relayMain(reader as RelayReader, modelUrl!, sinkPath!, Number(sessions), Number(windowsN));
    process.send(figures, () => process.exit(0));
  }
}
