/**
 * One editor window: a JSON-RPC peer over its WebSocket, its negotiated capabilities and the
 * sessions it is attached to. It is the ClientPort through which sessions reach that window.
 */
import { randomUUID } from "node:crypto";
import { JsonRpcPeer, RpcError, type RequestContext } from "../../shared/jsonrpc.js";
import type { ClientCapabilities } from "../../shared/acp-schemas.js";
import type { Logger } from "../log/log.js";
import type { ClientCaps, SessionUpdate } from "../sessions/index.js";
import { EditorSilence } from "../tools/editor-silence.js";
import type { AcpServices, AcpWindow, ConnectionInfo } from "./context.js";
export type { ConnectionInfo } from "./context.js";
import { toRpcError } from "./errors.js";
import { notificationMethods, requestMethods } from "./methods.js";
import { checkShape } from "./shape.js";

const isVendorMethod = (method: string): boolean => method.startsWith("_reasonix.io/");

/** Requests one window may have the daemon work on at once; more wait, and the socket stops being read. */
export const MAX_IN_FLIGHT = 64;

export class AcpConnection implements AcpWindow {
  readonly connectionId = randomUUID();
  capabilities: ClientCaps = {
    readTextFile: false,
    writeTextFile: false,
    terminal: false,
    extensionSurface: false,
    vendor: false,
    elicitationForm: false,
    elicitationUrl: false,
    mcpInteraction: false,
  };
  clientCapabilities: ClientCapabilities | undefined;
  lastActive = Date.now();
  readonly log: Logger;
  /** One warning per timeout, naming the method and the window (its connection id and shim pid, never its environment). */
  readonly silence = new EditorSilence((method, timeoutMs, askAgainMs) =>
    this.log.warn(
      { method, timeoutMs, shimPid: this.info.shimPid, askAgainMs },
      `the window did not answer ${method} within ${timeoutMs / 1000} s; it is not asked ${method} again for ${askAgainMs / 60_000} minutes`,
    ),
  );
  private readonly peer: JsonRpcPeer;

  constructor(
    private readonly send: (text: string, notification: boolean) => void,
    readonly services: AcpServices,
    readonly info: ConnectionInfo,
    readonly backlog: () => number = () => 0,
    /** Stops and restarts reading from the window (backpressure when it sends too much at once). */
    pressure?: (paused: boolean) => void,
    /** Many notifications at once, in order, as one write (a replay's batch); else one `send` each. */
    private readonly sendMany?: (texts: readonly string[], around: { head: string; tail: string }) => void,
  ) {
    this.log = services.log.child({ connId: this.connectionId });
    this.peer = new JsonRpcPeer(
      send,
      {
        request: (method, params, ctx) => this.dispatch(method, params, ctx),
        notification: (method, params) => this.dispatchNotification(method, params),
        toRpcError,
      },
      {
        maxInFlight: MAX_IN_FLIGHT,
        // A prompt holds its request open for a whole turn; prompts are bounded by the inbox instead.
        exempt: (method) => method === "session/prompt",
        ...(pressure ? { onPressure: pressure } : {}),
      },
    );
  }

  get closed(): boolean {
    return this.peer.closed;
  }

  get env(): Readonly<Record<string, string | undefined>> {
    return this.info.env;
  }

  get umask(): number | undefined {
    return this.info.umask;
  }

  receive(text: string): void {
    this.peer.receive(text);
  }

  sendUpdate(sessionId: string, update: SessionUpdate): void {
    this.peer.notify("session/update", { sessionId, update });
  }

  /** The same notifications as `sendUpdate` would send, for updates already JSON: a replay's batch. */
  sendEncodedUpdates(sessionId: string, updates: readonly string[]): void {
    if (this.peer.closed || updates.length === 0) return;
    const head = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},"update":`;
    if (this.sendMany) this.sendMany(updates, { head, tail: "}}" });
    else for (const update of updates) this.send(`${head}${update}}}`, true);
  }

  notify(method: string, params: unknown): void {
    if (isVendorMethod(method) && !this.capabilities.vendor) return;
    this.peer.notify(method, params);
  }

  request(method: string, params: unknown, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown> {
    if (isVendorMethod(method) && !this.capabilities.vendor) {
      return Promise.reject(RpcError.methodNotFound(`${method} (this client did not opt in to Reasonix extensions)`));
    }
    const answer = this.peer.request(method, params, opts);
    if (method !== "session/request_permission") return answer;
    // An answer to a permission question is the user acting in this window.
    return answer.then((result) => {
      this.lastActive = Date.now();
      return result;
    });
  }

  /** The socket is gone: the window detaches from every session, which go on without it. */
  dispose(): void {
    this.peer.close();
    this.services.sessions.detachEverywhere(this);
  }

  private async dispatch(method: string, params: unknown, ctx: RequestContext): Promise<unknown> {
    const spec = Object.hasOwn(requestMethods, method) ? requestMethods[method] : undefined;
    if (!spec) throw RpcError.methodNotFound(method);
    checkShape(params);
    const parsed = spec.params.parse(params ?? {});
    if (spec.acts) this.lastActive = Date.now();
    return spec.handler(parsed, this, ctx);
  }

  private dispatchNotification(method: string, params: unknown): void {
    const spec = Object.hasOwn(notificationMethods, method) ? notificationMethods[method] : undefined;
    if (!spec) return; // unknown notifications are ignored, never answered
    try {
      checkShape(params);
    } catch {
      this.log.debug({ method }, "ignored notification with oversized params");
      return;
    }
    const parsed = spec.params.safeParse(params ?? {});
    if (!parsed.success) {
      this.log.debug({ method }, "ignored notification with bad params");
      return;
    }
    if (spec.acts) this.lastActive = Date.now();
    try {
      spec.handler(parsed.data, this);
    } catch (err) {
      this.log.debug({ method, err }, "notification handler failed");
    }
  }
}
