import { ZodError } from "zod";
import { RpcError } from "../../shared/jsonrpc.js";
import { oneSentence, redact } from "../../shared/redact.js";
import { errorText } from "../../shared/error-text.js";

/** One mapper for everything a handler throws: typed errors pass, the rest is one redacted sentence. */
export function toRpcError(err: unknown, method: string): RpcError {
  if (err instanceof RpcError) return err;
  if (err instanceof ZodError) {
    const first = err.issues[0];
    const field = first?.path.length ? first.path.join(".") : "params";
    const detail = first ? `${field}: ${first.message}` : "params do not match the method's schema";
    return RpcError.invalidParams(detail, { method, issues: err.issues.map((i) => ({ path: i.path, message: i.message })) });
  }
  const message = errorText(err);
  return RpcError.internal(`Internal error in ${method}: ${oneSentence(redact(message))}`);
}
