/**
 * The `fetch` the openai SDK is given: node:http(s) under the SDK's own request logic (retries,
 * timeouts, errors by status). A streamed answer's body is not wrapped in a WHATWG stream: the
 * Response carries no body and `rawBody()` hands the reader the socket's own stream, so each
 * network read costs one 'data' event instead of undici's web-stream machinery, which was a
 * quarter of the daemon's CPU per chunk with 50 sessions streaming. Anything else (error answers,
 * JSON) is read whole into an ordinary Response, up to MAX_WHOLE_BODY_BYTES: the provider is
 * untrusted, and a gigabyte error page must not become a gigabyte in the daemon. Failures look as
 * undici's do to the SDK: a TypeError "fetch failed" with the cause, an AbortError when the signal fires.
 */
import type { IncomingMessage } from "node:http";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

/** A body read whole keeps at most this much (error answers are a few hundred bytes); the connection is closed past it. */
export const MAX_WHOLE_BODY_BYTES = 8 * 1024 * 1024;

const bodies = new WeakMap<Response, Readable>();
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** The socket stream of a streamed answer from `nodeFetch`; undefined for any other Response. */
export function rawBody(response: Response): Readable | undefined {
  return bodies.get(response);
}

/**
 * The body as sent, decompressed when the server compressed it anyway (this client never asks it
 * to; undici's fetch would have decoded it). Errors of the socket reach the returned stream.
 */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const unzip =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!unzip) return res;
  res.on("error", (err) => unzip.destroy(err));
  res.on("close", () => {
    if (!res.complete) unzip.destroy(new Error("aborted"));
  });
  return res.pipe(unzip);
}

const abortError = (): DOMException => new DOMException("This operation was aborted", "AbortError");

export async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  if (input instanceof Request || (body !== undefined && body !== null && typeof body !== "string" && !(body instanceof Uint8Array))) {
    return fetch(input, init); // shapes the SDK does not send for chat completions
  }
  const url = new URL(input);
  const https = url.protocol === "https:";
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, key) => {
    headers[key] = value;
  });
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError();
  return send(url, https, init, headers, signal, true);
}

/**
 * One request. A kept-alive socket the server closed as it sat idle fails the next request on it
 * with a reset before any answer (the server's idle timeout racing our send; the server closed
 * before reading it), so it is sent once more at once on a new socket (`retryStale`), as Node's
 * documentation of `reusedSocket` advises, rather than reported as an unreachable provider. A new
 * socket that fails so is reported: the SDK's own retries and their notice take it from there.
 */
function send(
  url: URL,
  https: boolean,
  init: RequestInit,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  retryStale: boolean,
): Promise<Response> {
  const body = init.body as string | Uint8Array | null | undefined;
  return new Promise<Response>((resolve, reject) => {
    let answered = false;
    const req = (https ? httpsRequest : httpRequest)(url, { method: init.method ?? "GET", headers, agent: https ? agents.https : agents.http }, (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (Array.isArray(v)) for (const x of v) h.append(k, x);
        else if (v !== undefined) h.set(k, v);
      }
      if (status >= 200 && status < 300 && /text\/event-stream/i.test(res.headers["content-type"] ?? "")) {
        const response = new Response(null, { status, statusText: res.statusMessage ?? "", headers: h });
        bodies.set(response, decoded(res));
        resolve(response);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const body = decoded(res);
      const finish = (): void => {
        if (done) return;
        done = true;
        const empty = status === 204 || status === 304 || init.method === "HEAD";
        resolve(new Response(empty ? null : Buffer.concat(chunks, size), { status, statusText: res.statusMessage ?? "", headers: h }));
      };
      body.on("data", (c: Buffer) => {
        if (done) return;
        const room = MAX_WHOLE_BODY_BYTES - size;
        chunks.push(c.length > room ? c.subarray(0, room) : c);
        size += Math.min(c.length, room);
        if (c.length < room) return;
        // Its start says what it is; the rest is not read.
        finish();
        res.destroy();
      });
      body.on("end", finish);
      body.on("error", (err) => {
        if (!done) reject(new TypeError("fetch failed", { cause: err }));
      });
    });
    const onAbort = (): void => {
      req.destroy(abortError());
      reject(abortError());
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal?.removeEventListener("abort", onAbort));
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (retryStale && req.reusedSocket && !answered && !signal?.aborted && (err.code === "ECONNRESET" || err.code === "EPIPE")) {
        resolve(send(url, https, init, headers, signal, false));
        return;
      }
      reject(signal?.aborted ? abortError() : new TypeError("fetch failed", { cause: err }));
    });
    req.end(body ?? undefined);
  });
}
