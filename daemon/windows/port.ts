/**
 * A window as a session sees it: implemented by acp/ (one per editor connection), handed down so
 * that nothing below acp/ imports it.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { EditorSilence } from "../tools/editor-silence.js";

/** What a session knows of an attached editor connection (implemented by acp/). */
export interface ClientPort {
  readonly connectionId: string;
  readonly capabilities: ClientCaps;
  /**
   * When the user last acted in this window (a prompt, a cancel, a setting, an answer to a
   * permission question): picks the target of editor requests. The window keeps it (acp/connection.ts).
   */
  readonly lastActive: number;
  readonly closed: boolean;
  /** The window's whole environment, as its shim sent it (secrets included: never hand it to a tool). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The window's umask, as its shim sent it; undefined when the client did not say. */
  readonly umask?: number | undefined;
  sendUpdate(sessionId: string, update: SessionUpdate): void;
  /**
   * Updates already JSON text, each exactly what `sendUpdate` would send of it, in order and in as
   * few writes as the window allows: session/load's replay, tens of thousands at a time.
   */
  sendEncodedUpdates(sessionId: string, updates: readonly string[]): void;
  /** A vendor notification (status updates, extension surfaces). */
  notify(method: string, params: unknown): void;
  /** Bytes sent to this window but not yet taken by it: replay waits when it grows. */
  backlog(): number;
  request(method: string, params: unknown, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  /** The `fs/*` and `terminal/*` methods this window let time out lately: the window's, for every session on it. */
  readonly silence: EditorSilence;
}

export interface ClientCaps {
  readTextFile: boolean;
  writeTextFile: boolean;
  terminal: boolean;
  /** The client renders Reasonix extension surfaces itself (vendor opt-in). */
  extensionSurface: boolean;
  /** ACP `elicitation/create`, per mode (clientCapabilities.elicitation.form / .url). */
  elicitationForm: boolean;
  elicitationUrl: boolean;
  /** The vendor opt-in `_meta["reasonix.io"].mcpInteraction = {supported: true, schemaVersion: 1}`. */
  mcpInteraction: boolean;
  /**
   * The client's initialize carried `clientCapabilities._meta["reasonix.io"]`: only then does it get
   * `_reasonix.io/` notifications and reverse requests (generic clients print every one they get).
   */
  vendor: boolean;
}
