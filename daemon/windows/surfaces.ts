/**
 * Extension surfaces (plugin cards, statuses and forms). Windows that opted in to
 * `reasonix.io.extensionSurface` get the structured payload; every other window gets the text
 * fallback as an agent message, and a form becomes a permission request. The ledger keeps the text
 * fallback with the payload in `_meta`, so a replay serves both kinds of client.
 */
import { randomUUID } from "node:crypto";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { z } from "zod";
import type { FormSurface, Surface } from "../plugins/manifest.js";
import { formAsPermission, surfaceText } from "../plugins/surface-text.js";
import type { EditorRouter } from "./editor-router.js";
import type { PermissionBroker } from "./permission-broker.js";
import type { ClientPort } from "./port.js";

export const SURFACE_NOTIFICATION = "_reasonix.io/session/extension_surface";
export const FORM_REQUEST = "_reasonix.io/session/extension_form";

const FormAnswer = z.union([
  z.object({ action: z.literal("submit"), values: z.record(z.string(), z.string()) }).passthrough(),
  z.object({ action: z.literal("cancel") }).passthrough(),
]);

export interface SurfaceHost {
  sessionId: string;
  attachments(): Iterable<ClientPort>;
  record(update: SessionUpdate): void;
  sendTo(port: ClientPort, update: SessionUpdate): void;
  router: EditorRouter;
  broker: PermissionBroker;
  /** False once the turn has answered: nothing of it may follow. */
  live(): boolean;
}

const chunk = (text: string, meta?: Record<string, unknown>): SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: { type: "text", text },
  _meta: { "reasonix.io": { kind: "extension", ...meta } },
});

export class SurfaceEmitter {
  constructor(private readonly host: SurfaceHost) {}

  async show(surface: Surface, signal: AbortSignal, origin: ClientPort | undefined): Promise<void> {
    if (surface.type === "form") {
      await this.form(surface, signal, origin);
      return;
    }
    this.publish(surface);
  }

  private publish(surface: Surface): void {
    if (!this.host.live()) return;
    const fallback = chunk(surfaceText(surface), { extensionSurface: surface });
    this.host.record(fallback);
    for (const port of this.host.attachments()) {
      if (port.closed) continue;
      if (port.capabilities.extensionSurface) port.notify(SURFACE_NOTIFICATION, { sessionId: this.host.sessionId, surface });
      else this.host.sendTo(port, fallback);
    }
  }

  private async form(surface: FormSurface, signal: AbortSignal, origin: ClientPort | undefined): Promise<void> {
    let values: Record<string, string> | undefined;
    const target = origin && !origin.closed ? origin : this.host.router.pick("any");
    if (target?.capabilities.extensionSurface) {
      try {
        const answer = FormAnswer.parse(await target.request(FORM_REQUEST, { sessionId: this.host.sessionId, surface }, { signal }));
        values = answer.action === "submit" ? answer.values : undefined;
      } catch {
        values = undefined;
      }
    } else {
      const asked = formAsPermission(surface);
      const outcome = await this.host.broker.ask(
        { toolCallId: `form_${randomUUID()}`, title: asked.title, kind: "other", status: "pending" },
        asked.options,
        signal,
      );
      values = outcome.outcome === "selected" ? asked.answer(outcome.optionId) : undefined;
    }
    const text = values
      ? `**${surface.title}** — submitted: ${
          Object.entries(values)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ") || "(no fields)"
        }`
      : `**${surface.title}** — cancelled.`;
    if (!this.host.live()) return;
    const update = chunk(text, { form: surface.title, values: values ?? null });
    this.host.record(update);
    for (const port of this.host.attachments()) if (!port.closed) this.host.sendTo(port, update);
  }
}
