/**
 * A request to an editor window with a bound. A window that never answers must not hold a tool call,
 * and the turn behind it, for ever: when the bound or the call's own cancellation comes first, the
 * request is withdrawn (the peer sends `$/cancel_request` and forgets it) and the call goes on with
 * an error that names the method. The window remembers the timeout (editor-silence.ts): the next
 * requests of that method fail at once with EditorSilentError, which the callers take as "go the
 * local way", until the window is asked again.
 */
import type { z } from "zod";
import { RpcError } from "../../shared/jsonrpc.js";
import type { EditorPort } from "./types.js";

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

/** The window let a request of this method time out lately: it is not asked, nothing waits. */
export class EditorSilentError extends Error {
  constructor(
    readonly method: string,
    askAgainMs: number,
  ) {
    super(`the editor did not answer ${method} lately, so it is not asked again for up to ${Math.round(askAgainMs / 60_000)} minutes`);
    this.name = "EditorSilentError";
  }
}

export async function askEditor(editor: EditorPort, method: string, params: unknown, opts: { timeoutMs?: number; signal?: AbortSignal }): Promise<unknown> {
  if (editor.silence?.silent(method)) throw new EditorSilentError(method, editor.silence.askAgainMs);
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
    const answer = await editor.request(method, params, { signal: withdraw.signal });
    editor.silence?.answered(method, true);
    return answer;
  } catch (err) {
    if (timedOut) {
      editor.silence?.timedOut(method, opts.timeoutMs!);
      throw new EditorTimeoutError(method, opts.timeoutMs!);
    }
    // An error the editor sent is an answer too; a withdrawal or a closed connection is not.
    if (err instanceof RpcError && !withdraw.signal.aborted) editor.silence?.answered(method, false);
    throw err;
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", follow);
  }
}
