/**
 * Asks permission questions and never loses one: if the window asked leaves before answering, the
 * question goes to another attached window, or waits for the next to attach, until a timeout,
 * after which it counts as rejected; a window that keeps it unanswered that long is held to the same
 * bound. Answers that are malformed or name an option never offered count as rejected too. Nothing
 * is ever approved without an answer.
 */
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { ConnectionClosedError } from "../../shared/jsonrpc.js";
import { RequestPermissionResponse } from "../../shared/acp-schemas.js";
import type { EditorRouter } from "./editor-router.js";
import type { ClientPort } from "./port.js";

export interface PendingQuestion {
  toolCallId: string;
  title: string | undefined;
  since: string;
  askedOn: string | undefined;
}

export class PermissionBroker {
  readonly pending = new Map<symbol, PendingQuestion>();

  constructor(
    private readonly sessionId: string,
    private readonly router: EditorRouter,
    private readonly timeoutMs: () => number,
  ) {}

  async ask(toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<RequestPermissionOutcome> {
    const key = Symbol(toolCall.toolCallId);
    const entry: PendingQuestion = { toolCallId: toolCall.toolCallId, title: toolCall.title ?? undefined, since: new Date().toISOString(), askedOn: undefined };
    this.pending.set(key, entry);
    const deadline = Date.now() + this.timeoutMs();
    const gone = new Set<ClientPort>();
    try {
      while (!signal.aborted) {
        const target = this.router.pick("any", gone);
        if (!target) {
          const attached = await this.router.waitForAttach(deadline - Date.now(), signal);
          if (!attached) return { outcome: "cancelled" };
          continue;
        }
        entry.askedOn = target.connectionId;
        // An attached window that never answers is held to the same deadline as an empty session:
        // the question is withdrawn ($/cancel_request) and counts as rejected.
        const left = deadline - Date.now();
        if (left <= 0) return { outcome: "cancelled" };
        const bounded = AbortSignal.any([signal, AbortSignal.timeout(left)]);
        try {
          const raw = await target.request("session/request_permission", { sessionId: this.sessionId, toolCall, options }, { signal: bounded });
          const parsed = RequestPermissionResponse.safeParse(raw);
          if (!parsed.success) return { outcome: "cancelled" };
          const outcome = parsed.data.outcome;
          if (outcome.outcome === "selected" && !options.some((o) => o.optionId === outcome.optionId)) {
            return { outcome: "cancelled" };
          }
          return outcome.outcome === "selected" ? { outcome: "selected", optionId: outcome.optionId } : { outcome: "cancelled" };
        } catch (err) {
          if (bounded.aborted) return { outcome: "cancelled" };
          // The window left before answering: nothing was decided, so ask elsewhere.
          if (err instanceof ConnectionClosedError || target.closed) {
            gone.add(target);
            continue;
          }
          return { outcome: "cancelled" };
        }
      }
      return { outcome: "cancelled" };
    } finally {
      this.pending.delete(key);
    }
  }
}
