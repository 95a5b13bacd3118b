import type { ClientCapabilities } from "../../shared/acp-schemas.js";
import type { ClientCaps } from "../sessions/types.js";

/** Omitted capabilities are unsupported (ACP §initialization). */
export function toClientCaps(caps: ClientCapabilities | null | undefined): ClientCaps {
  return {
    readTextFile: caps?.fs?.readTextFile === true,
    writeTextFile: caps?.fs?.writeTextFile === true,
    terminal: caps?.terminal === true,
  };
}
