/**
 * A fetched page as text for the model: HTML becomes Markdown through turndown (the most used
 * HTML-to-Markdown converter on npm, with its own DOM parser for Node, loaded on first use), other
 * text types pass through, anything else is refused. The charset comes from the Content-Type, or
 * for HTML from its <meta>, and is decoded with iconv-lite.
 */
import iconv from "iconv-lite";

const HTML = /^(text\/html|application\/xhtml\+xml)$/;
const TEXT = /^(text\/[\w.+-]+|application\/([\w.-]+\+)?(json|xml)|application\/(javascript|ecmascript|x-sh|toml|yaml|x-yaml))$/;

type Turndown = { turndown(html: string): string };
let converter: Promise<(base: string) => Turndown> | undefined;

async function makeConverter(): Promise<(base: string) => Turndown> {
  const { default: TurndownService } = await import("turndown");
  return (base: string) => {
    const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
    service.remove(["script", "style", "noscript", "template", "iframe", "object", "head", "title", "svg", "canvas", "form"] as never);
    // Links and images relative to the page are useless once the page is gone: make them absolute.
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
    return service;
  };
}

function charsetOf(contentType: string, body: Buffer, html: boolean): string {
  const declared = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  const meta = html ? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString("latin1"))?.[1] : undefined;
  const name = (declared ?? meta ?? "utf-8").toLowerCase();
  return iconv.encodingExists(name) ? name : "utf-8";
}

export function titleOf(html: string): string | undefined {
  const t = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.replace(/\s+/g, " ").trim();
  return t || undefined;
}

export type PageText = { ok: true; text: string; title: string | undefined; html: boolean } | { ok: false; reason: string };

export async function pageText(contentType: string, body: Buffer, url: string): Promise<PageText> {
  const mime = contentType.split(";")[0]!.trim().toLowerCase() || "text/html";
  const html = HTML.test(mime);
  if (!html && !TEXT.test(mime)) return { ok: false, reason: `the response is ${mime}, not a text page; web_fetch returns HTML and text only` };
  const text = iconv.decode(body, charsetOf(contentType, body, html));
  if (!html) return { ok: true, text, title: undefined, html };
  converter ??= makeConverter();
  const markdown = (await converter)(url)
    .turndown(text)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return { ok: true, text: markdown, title: titleOf(text), html };
}
