/**
 * MCP elicitation as the agent relays it: what a server asks, what may come back, and the checks a
 * reply passes before the server sees it. Only `accept` carries content; a form's content must
 * match the schema the server asked with; a URL flow never carries content (credentials stay in
 * the browser). Anything malformed becomes `cancel`.
 */
export const INTERACTION_METHOD = "_reasonix.io/mcp/request_interaction";

export interface InteractionRequest {
  server: string;
  mode: "form" | "url";
  message: string;
  requestedSchema?: Record<string, unknown>;
  url?: string;
  elicitationId?: string;
}

export type InteractionContent = Record<string, string | number | boolean | string[]>;
export type InteractionResult = { action: "accept"; content?: InteractionContent } | { action: "decline" } | { action: "cancel" };

interface PropertySchema {
  type?: unknown;
  enum?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  items?: { enum?: unknown; anyOf?: Array<{ const?: unknown }> };
  oneOf?: Array<{ const?: unknown }>;
}

function fits(schema: PropertySchema, value: unknown): boolean {
  const allowed = Array.isArray(schema.enum) ? schema.enum : Array.isArray(schema.oneOf) ? schema.oneOf.map((o) => o.const) : undefined;
  switch (schema.type) {
    case "string":
      if (typeof value !== "string") return false;
      if (allowed && !allowed.includes(value)) return false;
      if (typeof schema.minLength === "number" && value.length < schema.minLength) return false;
      return !(typeof schema.maxLength === "number" && value.length > schema.maxLength);
    case "number":
    case "integer":
      if (typeof value !== "number" || !Number.isFinite(value)) return false;
      if (schema.type === "integer" && !Number.isInteger(value)) return false;
      if (typeof schema.minimum === "number" && value < schema.minimum) return false;
      return !(typeof schema.maximum === "number" && value > schema.maximum);
    case "boolean":
      return typeof value === "boolean";
    case "array": {
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) return false;
      const items = Array.isArray(schema.items?.enum) ? schema.items.enum : schema.items?.anyOf?.map((o) => o.const);
      return !items || value.every((v) => items.includes(v));
    }
    default:
      return false;
  }
}

/** A form's content against the flat schema MCP elicitation allows; undefined when it does not fit. */
export function checkContent(schema: Record<string, unknown> | undefined, content: unknown): InteractionContent | undefined {
  if (content === null || typeof content !== "object" || Array.isArray(content)) return undefined;
  const properties = (schema?.properties ?? {}) as Record<string, PropertySchema>;
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  const out: InteractionContent = {};
  for (const [key, value] of Object.entries(content)) {
    const property = properties[key];
    if (!property || !fits(property, value)) return undefined;
    out[key] = value as InteractionContent[string];
  }
  return required.every((key) => key in out) ? out : undefined;
}

/** Whatever a window answered, as the server may see it. */
export function settleReply(request: InteractionRequest, reply: unknown): InteractionResult {
  const r = reply as { action?: unknown; content?: unknown } | null | undefined;
  if (r?.action === "decline") return { action: "decline" };
  if (r?.action !== "accept") return { action: "cancel" };
  if (request.mode === "url") return { action: "accept" };
  const content = checkContent(request.requestedSchema, r.content ?? {});
  return content ? { action: "accept", content } : { action: "cancel" };
}
