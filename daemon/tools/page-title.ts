/**
 * A page's <title>, found in time linear in the page. The pattern it replaces,
 * /<title[^>]*>([\s\S]*?)<\/title>/i, tried every `<title` against the rest of the page: 300 KB of
 * `<title` repeated held the daemon's event loop for over 30 s. Each step here is one forward
 * search, and the first `<title` decides: when it has no `>` or no `</title>` after it, no later
 * one has either, so the answer is the pattern's answer.
 */

/** A title longer than this is cut: it heads the page the model reads, outside the page's own bound. */
export const MAX_TITLE_CHARS = 300;

export function titleOf(html: string): string | undefined {
  const open = /<title/i.exec(html);
  if (!open) return undefined;
  const gt = html.indexOf(">", open.index + "<title".length);
  if (gt < 0) return undefined;
  const close = /<\/title>/gi;
  close.lastIndex = gt + 1;
  const end = close.exec(html);
  if (!end) return undefined;
  const t = html
    .slice(gt + 1, end.index)
    .replace(/\s+/g, " ")
    .trim();
  if (!t) return undefined;
  return t.length > MAX_TITLE_CHARS ? `${t.slice(0, MAX_TITLE_CHARS - 1)}…` : t;
}
