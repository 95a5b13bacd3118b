/**
 * An MCP server's question (elicitation) on its way to the user: through ACP `elicitation/create`
 * to a window that offers the mode, else through `_reasonix.io/mcp/request_interaction` to a window
 * that opted in, else declined at once. The decision is in the ledger (and replays on load) before
 * the server hears it; what the user typed stays out of the ledger.
 */
import type { Logger } from "../log/log.js";
import { INTERACTION_METHOD, settleReply, type InteractionRequest, type InteractionResult } from "../mcp/interaction.js";
import type { EditorRouter } from "./editor-router.js";
import type { SessionUpdate } from "@agentclientprotocol/sdk";

export interface InteractionParts {
  sessionId: string;
  router: EditorRouter;
  log: Logger;
  /** The running turn (the prompt that led to the tool call that asked). */
  turnId(): string | undefined;
  /** Records and shows an update. */
  emit(update: SessionUpdate): void;
  commit(): Promise<void>;
  timeoutMs(): number;
}

const CANCEL = { action: "cancel" } as const;

export async function relayInteraction(parts: InteractionParts, request: InteractionRequest, signal: AbortSignal): Promise<InteractionResult> {
  const { sessionId, router } = parts;
  const opts = { signal, timeoutMs: parts.timeoutMs() };
  const acp = router.pick(request.mode === "url" ? "elicitationUrl" : "elicitationForm");
  const vendor = acp ? undefined : router.pick("mcpInteraction");
  const scope =
    request.mode === "url"
      ? { url: request.url, elicitationId: request.elicitationId }
      : { requestedSchema: request.requestedSchema ?? { type: "object", properties: {} } };
  let result: InteractionResult = { action: "decline" };
  if (acp) {
    const reply = await acp.request("elicitation/create", { sessionId, mode: request.mode, message: request.message, ...scope }, opts).catch(() => CANCEL);
    result = settleReply(request, reply);
  } else if (vendor) {
    const turnId = parts.turnId();
    const params = { sessionId, promptId: turnId, turnId, server: request.server, mode: request.mode, message: request.message, ...scope };
    result = settleReply(request, await vendor.request(INTERACTION_METHOD, params, opts).catch(() => CANCEL));
  }
  const fields = result.action === "accept" && result.content ? ` (${Object.keys(result.content).join(", ")})` : "";
  parts.emit({
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: `\n\n[mcp] ${request.server} asked: ${request.message} — ${result.action}${fields}\n\n` },
    _meta: { "reasonix.io": { kind: "mcp_interaction", server: request.server, mode: request.mode, action: result.action } },
  });
  await parts.commit().catch((err: unknown) => parts.log.warn({ err }, "could not save an MCP interaction decision"));
  return result;
}
