/**
 * The error catalogue: every error this agent answers with, its JSON-RPC code and how its message
 * reads, and RpcError, which carries one. The peer (jsonrpc.ts) re-exports all of it.
 */
import { clipped } from "./quote.js";

/**
 * Every error this agent answers with, in one place: its code and how its message reads (like
 * fastify's errors.js). Code elsewhere names an entry, never a number.
 */
export const ERRORS = {
  ParseError: { code: -32700, message: (detail: string) => detail },
  InvalidRequest: { code: -32600, message: (detail: string) => `Invalid request: ${detail}` },
  MethodNotFound: { code: -32601, message: (method: string) => `Method not found: ${clipped(method)}` },
  InvalidParams: { code: -32602, message: (detail: string) => `Invalid params: ${detail}` },
  InternalError: { code: -32603, message: (detail: string) => detail },
  /** No provider credentials: the client can run the terminal auth method (`reasonix setup`). */
  AuthRequired: { code: -32000, message: (detail: string) => detail },
  /** The shim's daemon went away, or could not start or be reached; the message is the cause. */
  DaemonUnavailable: { code: -32001, message: (detail: string) => detail },
  ResourceNotFound: { code: -32002, message: (sessionId: string) => `Session not found: ${clipped(sessionId)}` },
  RequestCancelled: { code: -32800, message: () => "Request cancelled" },
  /** The specification words inbox refusals (full, too large, not pending) as -32600 without a prefix. */
  InboxRefused: { code: -32600, message: (detail: string) => detail },
  /** Vendor methods name an unknown session -32602, as the specification's table says. */
  VendorUnknownSession: { code: -32602, message: (sessionId: string) => `Invalid params: sessionId: unknown session ${clipped(sessionId)}` },
} as const;

export const ErrorCode = {
  ParseError: ERRORS.ParseError.code,
  InvalidRequest: ERRORS.InvalidRequest.code,
  MethodNotFound: ERRORS.MethodNotFound.code,
  InvalidParams: ERRORS.InvalidParams.code,
  InternalError: ERRORS.InternalError.code,
  AuthRequired: ERRORS.AuthRequired.code,
  /** the shim's daemon went away (a request in flight when it died) */
  DaemonLost: ERRORS.DaemonUnavailable.code,
  /** the shim has no daemon at all: it could not start or reach one; the message is the cause */
  DaemonUnavailable: ERRORS.DaemonUnavailable.code,
  ResourceNotFound: ERRORS.ResourceNotFound.code,
  RequestCancelled: ERRORS.RequestCancelled.code,
} as const;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }

  /** An error from the catalogue by name, its message filled in. */
  static of<K extends keyof typeof ERRORS>(name: K, detail: string, data?: unknown): RpcError {
    const entry = ERRORS[name];
    return new RpcError(entry.code, entry.message(detail), data);
  }
  static parseError(detail = "Parse error: the line is not valid JSON"): RpcError {
    return RpcError.of("ParseError", detail);
  }
  static invalidRequest(detail: string): RpcError {
    return RpcError.of("InvalidRequest", detail);
  }
  static methodNotFound(method: string): RpcError {
    return RpcError.of("MethodNotFound", method, { method });
  }
  static invalidParams(detail: string, data?: unknown): RpcError {
    return RpcError.of("InvalidParams", detail, data);
  }
  static internal(detail: string): RpcError {
    return RpcError.of("InternalError", detail);
  }
  static authRequired(detail: string): RpcError {
    return RpcError.of("AuthRequired", detail);
  }
  static sessionNotFound(sessionId: string): RpcError {
    return RpcError.of("ResourceNotFound", sessionId, { sessionId });
  }
  static cancelled(): RpcError {
    return RpcError.of("RequestCancelled", "");
  }

  toObject(): RpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}
