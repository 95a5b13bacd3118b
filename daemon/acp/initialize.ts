// The unstable entry's type: it knows sessionCapabilities.fork.
import type { InitializeResponse } from "@agentclientprotocol/sdk/unstable";
import type { AcpWindow } from "./context.js";
import { rmSync } from "node:fs";
import { clipped, RpcError } from "../../shared/jsonrpc.js";
import type { z } from "zod";
import type { AuthenticateRequest, InitializeRequest } from "../../shared/acp-schemas.js";
import { toClientCaps } from "./client-caps.js";
import { reasonixCapabilities } from "./reasonix-ext.js";
import { errorText } from "../../shared/error-text.js";

/** The only protocol major this agent speaks; any request gets it back (ACP version negotiation). */
export const PROTOCOL_VERSION = 1;
export const SETUP_AUTH_METHOD_ID = "reasonix-setup";

export function initialize(params: z.output<typeof InitializeRequest>, conn: AcpWindow): InitializeResponse {
  conn.clientCapabilities = params.clientCapabilities ?? undefined;
  conn.capabilities = toClientCaps(params.clientCapabilities);
  const terminalAuth = params.clientCapabilities?.auth?.terminal === true;
  conn.log.info({ client: params.clientInfo?.name, requested: params.protocolVersion }, "initialize");
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      // fork is unstable v1 (schema.unstable.json); a client that does not know it ignores the key.
      // Its _meta says a fork may end at a message (`_meta["reasonix.io"].messageId` in the request).
      sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {}, additionalDirectories: {}, fork: { _meta: { "reasonix.io": { messageId: true } } } },
      auth: { logout: {} },
      _meta: reasonixCapabilities(),
    },
    // A terminal method may only be offered to clients that can run one (schema: AuthMethodTerminal).
    authMethods: terminalAuth
      ? [
          {
            type: "terminal",
            id: SETUP_AUTH_METHOD_ID,
            name: "Reasonix setup",
            description: "Configure a DeepSeek key or another OpenAI-compatible provider in a terminal.",
            args: ["setup"],
          },
        ]
      : [],
    agentInfo: { name: "reasonix", title: "Reasonix", version: conn.services.version },
  };
}

/**
 * logout: forgets the provider keys `reasonix setup` stored (credentials.json). Keys an editor passes
 * in its environment are the editor's to remove; the next prompt without a key is -32000 again.
 */
export function logout(_params: unknown, conn: AcpWindow): Record<string, never> {
  const file = conn.services.paths.credentialsFile;
  try {
    rmSync(file, { force: true });
  } catch (err) {
    throw RpcError.internal(`Could not remove the stored keys at ${file}: ${errorText(err)}`);
  }
  conn.log.info("logout: stored provider keys removed");
  return {};
}

export function authenticate(params: z.output<typeof AuthenticateRequest>): Record<string, never> {
  if (params.methodId !== SETUP_AUTH_METHOD_ID) {
    throw RpcError.invalidParams(`methodId: unknown authentication method "${clipped(params.methodId)}"`);
  }
  return {};
}
