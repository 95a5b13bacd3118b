/**
 * A client connected to the daemon's WebSocket directly, without the shim: the floor the shim's own
 * cost is priced against (the same upgrade headers the shim sends, then one message per frame).
 */
import { WebSocket } from "ws";
import { HEADER_ENV, HEADER_SHIM_PID, HEADER_WIRE, WIRE_MAJOR } from "../../../shared/wire.js";
import { NOTIFICATION_HEAD } from "./acp-process.js";

export class DirectClient {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(v: any): void; reject(e: Error): void }>();
  onNotification: ((data: string) => void) | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const text = data.toString();
      if (text.startsWith(NOTIFICATION_HEAD)) {
        this.onNotification?.(text);
        return;
      }
      const msg = JSON.parse(text);
      if (msg.method) {
        const option = msg.params?.options?.[0]?.optionId;
        ws.send(
          JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { outcome: option ? { outcome: "selected", optionId: option } : { outcome: "cancelled" } } }),
        );
        return;
      }
      const w = this.waiting.get(msg.id);
      if (!w) return;
      this.waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(`${msg.error.code} ${msg.error.message}`));
      else w.resolve(msg.result);
    });
  }

  static open(socketPath: string, env: Record<string, string>): Promise<DirectClient> {
    const ws = new WebSocket(`ws+unix:${socketPath}:/acp`, {
      headers: { [HEADER_WIRE]: String(WIRE_MAJOR), [HEADER_SHIM_PID]: String(process.pid), [HEADER_ENV]: Buffer.from(JSON.stringify(env)).toString("base64") },
      perMessageDeflate: false,
    });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new DirectClient(ws)));
      ws.once("error", reject);
    });
  }

  request(method: string, params: unknown): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once("close", () => resolve());
      this.ws.close();
    });
  }
}
