import type { ClientCapabilities } from "../../shared/acp-schemas.js";
import type { ClientCaps } from "../sessions/index.js";

/** Omitted capabilities are unsupported (ACP §initialization). */
export function toClientCaps(caps: ClientCapabilities | null | undefined): ClientCaps {
  return {
    readTextFile: caps?.fs?.readTextFile === true,
    writeTextFile: caps?.fs?.writeTextFile === true,
    terminal: caps?.terminal === true,
    extensionSurface: optedIn(caps?._meta, "extensionSurface"),
    // A mode is offered only when its key is present and not null (ACP §11; `{}` offers nothing).
    elicitationForm: caps?.elicitation?.form !== undefined && caps.elicitation.form !== null,
    elicitationUrl: caps?.elicitation?.url !== undefined && caps.elicitation.url !== null,
    mcpInteraction:
      optedIn(caps?._meta, "mcpInteraction") && (vendorMeta(caps?._meta)?.mcpInteraction as { schemaVersion?: unknown } | undefined)?.schemaVersion === 1,
    vendor: vendorMeta(caps?._meta) !== undefined,
  };
}

function vendorMeta(meta: unknown): Record<string, unknown> | undefined {
  const vendor = (meta as Record<string, unknown> | null | undefined)?.["reasonix.io"];
  return vendor !== null && typeof vendor === "object" && !Array.isArray(vendor) ? (vendor as Record<string, unknown>) : undefined;
}

/** Vendor opt-ins live in `clientCapabilities._meta["reasonix.io"]`; anything malformed leaves them off. */
function optedIn(meta: unknown, feature: string): boolean {
  const entry = vendorMeta(meta)?.[feature];
  return (entry as { supported?: unknown } | null | undefined)?.supported === true;
}
