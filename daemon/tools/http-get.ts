/**
 * One bounded HTTP(S) GET for web_fetch: every connection goes through the address guard, redirects
 * are followed only on the host the user approved (another host needs its own question) and at most
 * MAX_REDIRECTS times, the body stops at MAX_BODY_BYTES after decompression, and the whole fetch
 * ends with the call's signal or after FETCH_TIMEOUT_MS.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";
import { checkLiteralHost, guardedLookup } from "./net-guard.js";

export const MAX_REDIRECTS = 5;
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
export const FETCH_TIMEOUT_MS = 30_000;

export type GetResult =
  | { kind: "body"; url: string; status: number; contentType: string; body: Buffer; truncated: boolean }
  | { kind: "offHost"; url: string; location: string; status: number };

export class FetchError extends Error {}

export function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchError(`${raw} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new FetchError(`only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, "")}`);
  if (url.username || url.password) throw new FetchError("URLs with a user name or password are not fetched");
  return url;
}

function once(url: URL, allowPrivate: boolean, signal: AbortSignal): Promise<IncomingMessage> {
  checkLiteralHost(url.hostname, allowPrivate);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "GET",
      lookup: guardedLookup(allowPrivate),
      signal,
      headers: {
        "user-agent": "Reasonix/0.1 (web_fetch; +https://github.com/reasonix)",
        accept: "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5",
        "accept-encoding": "gzip, deflate, br",
      },
    });
    req.on("response", resolve);
    req.on("error", reject);
    req.end();
  });
}

function decoded(res: IncomingMessage): Readable {
  switch ((res.headers["content-encoding"] ?? "").toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return res.pipe(createGunzip());
    case "deflate":
      return res.pipe(createInflate());
    case "br":
      return res.pipe(createBrotliDecompress());
    default:
      return res;
  }
}

async function readBounded(res: IncomingMessage): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  const stream = decoded(res);
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      if (size + buf.length > MAX_BODY_BYTES) {
        chunks.push(buf.subarray(0, MAX_BODY_BYTES - size));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(buf);
      size += buf.length;
    }
  } finally {
    res.destroy();
    stream.destroy();
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

export async function boundedGet(start: URL, allowPrivate: boolean, signal: AbortSignal): Promise<GetResult> {
  const bound = AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]);
  let url = start;
  for (let hop = 0; ; hop++) {
    const res = await once(url, allowPrivate, bound);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && location) {
      res.destroy();
      const next = checkUrl(new URL(location, url).href);
      if (next.host !== start.host) return { kind: "offHost", url: url.href, location: next.href, status };
      if (hop >= MAX_REDIRECTS) throw new FetchError(`more than ${MAX_REDIRECTS} redirects from ${start.href}`);
      url = next;
      continue;
    }
    const { body, truncated } = await readBounded(res);
    return { kind: "body", url: url.href, status, contentType: String(res.headers["content-type"] ?? ""), body, truncated };
  }
}
