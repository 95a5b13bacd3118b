/**
 * An error as the model and the user should read it. Editors put the real cause of a failed
 * `fs/*` or `terminal/*` request in the error's `data` ("Permission denied for fs/write_text_file"),
 * under a bare "Internal error" message; dropping `data` would leave only that.
 */
const MAX_DETAIL = 2000;

/** The values of an object's fields, nested ones too, as far as they are plain data (bounded). */
function leaves(value: unknown, out: unknown[] = [], depth = 0): unknown[] {
  if (depth > 4 || out.length > 50) out.push(value);
  else if (Array.isArray(value)) for (const v of value) leaves(v, out, depth + 1);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) leaves(v, out, depth + 1);
  else out.push(value);
  return out;
}

function detailOf(data: unknown, message: string): string | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === "string") return data;
  if (typeof data === "object") {
    const d = data as Record<string, unknown>;
    for (const key of ["details", "message", "reason", "error"]) if (typeof d[key] === "string" && d[key]) return d[key] as string;
    // Our own errors' data repeats what the message says for machines ({ sessionId }, { method }).
    const values = leaves(data);
    if (values.length > 0 && values.every((v) => typeof v === "string" && message.includes(v))) return undefined;
  }
  try {
    return JSON.stringify(data);
  } catch {
    return undefined;
  }
}

/** An Error's message, or an error-like's from another realm (a worker, a vm context), else the value as text. */
function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  const message = (err as { message?: unknown } | null | undefined)?.message;
  return typeof message === "string" ? message : String(err);
}

/** The text of anything thrown: its message (with its `data`'s detail, once), else the value itself. */
export function errorText(err: unknown): string {
  const message = messageOf(err);
  const detail = detailOf((err as { data?: unknown } | null | undefined)?.data, message);
  if (!detail || message.includes(detail)) return message;
  const clipped = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
  return `${message}: ${clipped}`;
}
