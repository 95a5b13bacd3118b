/**
 * A request to an editor window with a bound. A window that never answers must not hold a tool call,
 * and the turn behind it, for ever: when the bound or the call's own cancellation comes first, the
 * request is withdrawn (the peer sends `$/cancel_request` and forgets it) and the call goes on with
 * an error that names the method.
 */
import type { z } from "zod";
import type { EditorPort } from "./types.js";

let bound = (): number => 60_000;

/** The daemon's configured bound (editorTimeoutSeconds), read at each tool call. */
export function setEditorTimeoutBound(get: () => number): void {
  bound = get;
}

export function editorTimeoutMs(): number {
  return bound();
}

/** An editor's answer that is not what its method returns: named, instead of a dump of schema issues. */
export function editorAnswer<T>(schema: z.ZodType<T>, method: string, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? ` (${issue.path.join(".")}: ${issue.message})` : issue ? ` (${issue.message})` : "";
  throw new Error(`the editor's answer to ${method} is not a valid ${method} result${where}`);
}

export class EditorTimeoutError extends Error {
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`the editor did not answer ${method} within ${Math.round(timeoutMs / 100) / 10} s`);
    this.name = "EditorTimeoutError";
  }
}

export async function askEditor(editor: EditorPort, method: string, params: unknown, opts: { timeoutMs?: number; signal?: AbortSignal }): Promise<unknown> {
  const withdraw = new AbortController();
  const follow = (): void => withdraw.abort(opts.signal?.reason);
  if (opts.signal?.aborted) follow();
  else opts.signal?.addEventListener("abort", follow, { once: true });
  let timedOut = false;
  const timer =
    opts.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          withdraw.abort();
        }, opts.timeoutMs);
  try {
    return await editor.request(method, params, { signal: withdraw.signal });
  } catch (err) {
    if (timedOut) throw new EditorTimeoutError(method, opts.timeoutMs!);
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", follow);
  }
}
