/**
 * A fetched page as text for the model: HTML becomes Markdown through turndown (the most used
 * HTML-to-Markdown converter on npm, with its own DOM parser for Node) on a worker thread
 * (page-worker.ts), other text types pass through, anything else is refused. The charset comes from the Content-Type, or
 * for HTML from its <meta>, and is decoded with iconv-lite (loaded at the first page).
 */
import { Worker } from "node:worker_threads";
import type Iconv from "iconv-lite";
import type { PageWorkerReply } from "./page-worker.js";

const HTML = /^(text\/html|application\/xhtml\+xml)$/;
const TEXT = /^(text\/[\w.+-]+|application\/([\w.-]+\+)?(json|xml)|application\/(javascript|ecmascript|x-sh|toml|yaml|x-yaml))$/;

/** A real file beside this one in dist, so it works wherever the compiled daemon runs from. */
const WORKER_URL = new URL("./page-worker.js", import.meta.url);
/** Converting a page (at most MAX_BODY_BYTES of HTML) takes seconds at worst; past this it is a runaway. */
export const CONVERT_TIMEOUT_MS = 20_000;
const WORKER_HEAP_MB = 256;

/** HTML to Markdown, and the page's title, on a thread of its own, ended on cancel or after CONVERT_TIMEOUT_MS. */
export function htmlToMarkdown(html: string, base: string, signal: AbortSignal): Promise<{ markdown: string; title: string | undefined }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: { html, base }, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      void worker.terminate();
      settle();
    };
    const onAbort = (): void => finish(() => reject(new Error("cancelled")));
    const timer = setTimeout(() => finish(() => reject(new Error(`converting the page took longer than ${CONVERT_TIMEOUT_MS / 1000} s`))), CONVERT_TIMEOUT_MS);
    signal.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (reply: PageWorkerReply) =>
      finish(() => (reply.ok ? resolve({ markdown: reply.markdown, title: reply.title }) : reject(new Error(reply.message)))),
    );
    worker.once("error", (err) => finish(() => reject(err)));
    worker.once("exit", (code) => finish(() => reject(new Error(`the page converter stopped (exit ${code})`))));
    if (signal.aborted) onAbort();
  });
}

function charsetOf(iconv: typeof Iconv, contentType: string, body: Buffer, html: boolean): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  const meta = html ? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString("latin1"))?.[1] : undefined;
  const name = (declared ?? meta ?? "utf-8").toLowerCase();
  return iconv.encodingExists(name) ? name : "utf-8";
}

export type PageText = { ok: true; text: string; title: string | undefined; html: boolean } | { ok: false; reason: string };

export async function pageText(contentType: string, body: Buffer, url: string, signal: AbortSignal): Promise<PageText> {
  const mime = contentType.split(";")[0]!.trim().toLowerCase() || "text/html";
  const html = HTML.test(mime);
  if (!html && !TEXT.test(mime)) return { ok: false, reason: `the response is ${mime}, not a text page; web_fetch returns HTML and text only` };
  // Loaded on first fetch, not at every daemon start.
  const iconv = (await import("iconv-lite")).default;
  const text = iconv.decode(body, charsetOf(iconv, contentType, body, html));
  if (!html) return { ok: true, text, title: undefined, html };
  const { markdown, title } = await htmlToMarkdown(text, url, signal);
  return { ok: true, text: markdown, title, html };
}
