/**
 * Bounds on the shape of what a client sends, checked before any handler sees it. JSON.parse takes
 * any depth, but JSON.stringify and every recursive walk after it do not: a prompt whose `_meta`
 * nests 100,000 deep used to fail deep inside the turn and wedge its session.
 */
import { clipped, RpcError } from "../../shared/jsonrpc.js";

export const MAX_PARAMS_DEPTH = 64;
export const MAX_META_BYTES = 64 * 1024;

const pathText = (path: readonly (string | number)[]): string =>
  path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? clipped(p) : `.${clipped(p)}`)).join("") || "params";

/** Throws -32602 naming the field when params nest too deep or a `_meta` object is too large. */
export function checkShape(params: unknown): void {
  const metas: Array<{ value: unknown; path: (string | number)[] }> = [];
  const stack: Array<{ value: unknown; path: (string | number)[] }> = [{ value: params, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (path.length >= MAX_PARAMS_DEPTH) {
      throw RpcError.invalidParams(`${pathText(path.slice(0, 6))}…: nested deeper than ${MAX_PARAMS_DEPTH} levels`);
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        stack.push({ value: item, path: [...path, i] });
      });
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key === "_meta") metas.push({ value: item, path: [...path, key] });
      stack.push({ value: item, path: [...path, key] });
    }
  }
  for (const { value, path } of metas) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
    if (bytes > MAX_META_BYTES) throw RpcError.invalidParams(`${pathText(path)}: ${bytes} bytes exceeds the ${MAX_META_BYTES}-byte limit for _meta`);
  }
}
