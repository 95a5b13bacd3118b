/**
 * An error as the model and the user should read it. Editors put the real cause of a failed
 * `fs/*` or `terminal/*` request in the error's `data` ("Permission denied for fs/write_text_file"),
 * under a bare "Internal error" message; dropping `data` would leave only that.
 */
const MAX_DETAIL = 2000;

function detailOf(data: unknown): string | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === "string") return data;
  if (typeof data === "object") {
    const d = data as Record<string, unknown>;
    for (const key of ["details", "message", "reason", "error"]) if (typeof d[key] === "string" && d[key]) return d[key] as string;
  }
  try {
    return JSON.stringify(data);
  } catch {
    return undefined;
  }
}

export function errorText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const detail = detailOf((err as { data?: unknown } | null | undefined)?.data);
  if (!detail || message.includes(detail)) return message;
  const clipped = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
  return `${message}: ${clipped}`;
}
