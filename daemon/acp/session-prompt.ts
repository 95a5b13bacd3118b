import { randomUUID } from "node:crypto";
import type { PromptResponse } from "@agentclientprotocol/sdk";
import type { AcpWindow } from "./context.js";
import type { z } from "zod";
import type { PromptRequest, SessionIdRequest } from "../../shared/acp-schemas.js";

/**
 * The window that prompts is not sent its own message back, so the answer names the id the other
 * windows and a replay show it under (the message-id RFD's `userMessageId`, in `_meta` as it is not
 * in the schema): a client can fork at it.
 */
export async function prompt(params: z.output<typeof PromptRequest>, conn: AcpWindow): Promise<PromptResponse> {
  const session = await conn.services.sessions.get(params.sessionId);
  const userMessageId = params.messageId ?? randomUUID();
  // The prompting window attaches, if it had not (a reconnected shim).
  const stopReason = await session.prompt(params.prompt, conn, userMessageId);
  return { stopReason, _meta: { "reasonix.io": { userMessageId } } };
}

/** A notification: unknown sessions are ignored, as no answer can be given. */
export function cancel(params: z.output<typeof SessionIdRequest>, conn: AcpWindow): void {
  conn.services.sessions.cancel(params.sessionId);
}
