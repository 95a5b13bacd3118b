/**
 * The HTML-to-Markdown thread's entry: one page from workerData, one message back, then the thread
 * ends. Turndown parses and walks the whole document synchronously (about a second for a few hundred
 * KiB), which must not hold the daemon's event loop; page-text.ts terminates the thread on cancel
 * or when it runs too long. Everything else that reads the page's text (its title, the blank-line
 * cleanup) runs here too: nothing of a fetched page meets a pattern on the daemon's loop.
 */
import { parentPort, workerData } from "node:worker_threads";
import TurndownService from "turndown";
import { titleOf } from "./page-title.js";
import { errorText } from "../../shared/error-text.js";

export type PageWorkerReply = { ok: true; markdown: string; title: string | undefined } | { ok: false; message: string };

const { html, base } = workerData as { html: string; base: string };

function convert(): string {
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  service.remove(["script", "style", "noscript", "template", "iframe", "object", "head", "title", "svg", "canvas", "form"] as never);
  // Links relative to the page are useless once the page is gone: make them absolute.
  service.addRule("absoluteLinks", {
    filter: (node) => node.nodeName === "A" && !!node.getAttribute("href"),
    replacement: (content, node) => {
      const href = (node as { getAttribute(n: string): string | null }).getAttribute("href") ?? "";
      let abs = href;
      try {
        abs = new URL(href, base).href;
      } catch {
        // Keep what the page wrote.
      }
      return content.trim() ? `[${content.trim()}](${abs})` : "";
    },
  });
  // \n{3,} matches a run or fails within three characters: linear.
  return service
    .turndown(html)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

let reply: PageWorkerReply;
try {
  reply = { ok: true, markdown: convert(), title: titleOf(html) };
} catch (err) {
  reply = { ok: false, message: errorText(err) };
}
parentPort!.postMessage(reply);
