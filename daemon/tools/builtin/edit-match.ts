/**
 * One search/replace edit applied to a file's text, or the reason it cannot be, in words the model
 * can act on. An exact match comes first; when there is none, a match that ignores whitespace
 * (indentation, runs of spaces, trailing blanks) is tried on whole lines, and the new text is
 * re-indented to the file's indentation. When both fail, the diagnosis names the nearest candidate.
 *
 * The file is untrusted and oldText is the model's, either up to many MiB, and all of this runs on
 * the daemon's event loop: every step is linear in the text (the matches are found by one forward
 * search each, line numbers in one pass, the result joined once), never a pattern built from oldText
 * (words joined by [ \t]+ took 6 s for a 200 KB file, and overflowed the regex stack for 100 000 words).
 */

export interface Edit {
  oldText: string;
  newText: string;
  replaceAll?: boolean | undefined;
}

export type EditOutcome = { text: string; note?: string } | { error: string };

/** Lines × tokens compared at most when looking for the nearest candidate; past it only oldText's first line is used. */
const NEAREST_BUDGET = 2_000_000;
/** An edit whose result would be larger than this (characters) is refused: replaceAll multiplies newText. */
export const MAX_EDIT_RESULT_CHARS = 16 * 1024 * 1024;
const SHOWN_CANDIDATE_LINES = 8;
const SHOWN_LINE_NUMBERS = 5;

function indices(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

/** The line number of each of `indices` (ascending), in one pass over the text. */
function linesAt(text: string, indices: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let nl = text.indexOf("\n");
  for (const index of indices) {
    while (nl >= 0 && nl < index) {
      line++;
      nl = text.indexOf("\n", nl + 1);
    }
    out.push(line);
  }
  return out;
}

type Span = { start: number; end: number; with: string };

/** The text with each span (ascending, disjoint) replaced: one join, not a copy of the text per span. */
function spliced(text: string, spans: readonly Span[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const s of spans) {
    parts.push(text.slice(at, s.start), s.with);
    at = s.end;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

const overBound = (): EditOutcome => ({
  error: `the edit would make the file longer than the ${MAX_EDIT_RESULT_CHARS} characters an edit may produce; replace fewer places, or less text`,
});

/** The spliced text, unless it would pass MAX_EDIT_RESULT_CHARS (spans here share one newText: nothing is built first). */
function splicedWithin(text: string, spans: readonly Span[], note?: string): EditOutcome {
  let size = text.length;
  for (const s of spans) size += s.with.length - (s.end - s.start);
  if (size > MAX_EDIT_RESULT_CHARS) return overBound();
  return note === undefined ? { text: spliced(text, spans) } : { text: spliced(text, spans), note };
}

function lineList(lines: number[]): string {
  const shown = lines.slice(0, SHOWN_LINE_NUMBERS).join(", ");
  return lines.length > SHOWN_LINE_NUMBERS ? `${shown}, …` : shown;
}

const norm = (line: string): string => line.replace(/\r$/, "").trim().replace(/\s+/g, " ");
const indentOf = (line: string): string => /^[ \t]*/.exec(line.replace(/\r$/, ""))![0];

/** The model's lines without a final newline (which only says the match ends a line). */
function modelLines(text: string): { lines: string[]; endsLine: boolean } {
  const t = text.replace(/\r\n/g, "\n");
  const endsLine = t.endsWith("\n");
  return { lines: (endsLine ? t.slice(0, -1) : t).split("\n"), endsLine };
}

/** Moves newText from the indentation the model assumed to the one the file has. */
function reindent(newText: string, oldLines: string[], fileLines: string[]): { text: string; moved: boolean } {
  const at = oldLines.findIndex((l) => l.trim() !== "");
  if (at < 0) return { text: newText, moved: false };
  const from = indentOf(oldLines[at]!);
  const to = indentOf(fileLines[at]!);
  if (from === to) return { text: newText, moved: false };
  const text = newText
    .split("\n")
    .map((l) => (l.trim() === "" || !l.startsWith(from) ? l : to + l.slice(from.length)))
    .join("\n");
  return { text, moved: true };
}

function lineStarts(fileLines: string[]): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const l of fileLines) {
    starts.push(at);
    at += l.length + 1;
  }
  return starts;
}

/** Where `want` occurs in `have`, line for line, without overlaps: Knuth–Morris–Pratt, linear in both. */
function wholeLineMatches(have: readonly string[], want: readonly string[]): number[] {
  const fallback = new Int32Array(want.length);
  for (let i = 1, k = 0; i < want.length; i++) {
    while (k > 0 && want[i] !== want[k]) k = fallback[k - 1]!;
    if (want[i] === want[k]) k++;
    fallback[i] = k;
  }
  const found: number[] = [];
  for (let i = 0, k = 0; i < have.length; i++) {
    while (k > 0 && have[i] !== want[k]) k = fallback[k - 1]!;
    if (have[i] === want[k]) k++;
    if (k === want.length) {
      found.push(i - k + 1);
      k = 0;
    }
  }
  return found;
}

function tolerantMatch(text: string, e: Edit, crlf: boolean): EditOutcome | undefined {
  const old = modelLines(e.oldText);
  const want = old.lines.map(norm);
  if (want.every((w) => w === "")) return undefined;
  const fileLines = text.split("\n");
  const found = wholeLineMatches(fileLines.map(norm), want);
  if (found.length === 0) return undefined;
  const where = found.map((i) => i + 1);
  if (found.length > 1 && !e.replaceAll) {
    return {
      error: `oldText is not unique: it matches ${found.length} places when whitespace is ignored (lines ${lineList(where)}); include more surrounding lines, or set replaceAll`,
    };
  }
  const starts = lineStarts(fileLines);
  let moved = false;
  let size = text.length;
  const spans: Span[] = [];
  for (const i of found) {
    const last = i + want.length - 1;
    let end: number;
    if (old.endsLine) end = last + 1 < fileLines.length ? starts[last + 1]! : text.length;
    else end = starts[last]! + fileLines[last]!.replace(/\r$/, "").length;
    const r = reindent(e.newText.replace(/\r\n/g, "\n"), old.lines, fileLines.slice(i, last + 1));
    moved ||= r.moved;
    const span = { start: starts[i]!, end, with: crlf ? r.text.replace(/\n/g, "\r\n") : r.text };
    // Each re-indented copy is a string of its own: stop before they pile up past the bound.
    size += span.with.length - (end - span.start);
    if (size > MAX_EDIT_RESULT_CHARS) return overBound();
    spans.push(span);
  }
  const out = spliced(text, spans);
  const note = `oldText matched only when whitespace was ignored (line ${lineList(where)})${moved ? "; newText was re-indented to the file's indentation" : ""}`;
  return { text: out, note };
}

/** The text with each run of spaces and tabs as one space, and the way back to the text's own offsets. */
function collapsedBlanks(text: string): { flat: string; offset(flatIndex: number): number } {
  const parts: string[] = [];
  const runAt: number[] = [];
  const droppedAfter: number[] = [];
  let dropped = 0;
  let at = 0;
  const blank = (i: number): boolean => {
    const c = text.charCodeAt(i);
    return c === 32 || c === 9;
  };
  for (let i = 0; i < text.length; i++) {
    if (!blank(i)) continue;
    let j = i + 1;
    while (j < text.length && blank(j)) j++;
    // A single space is already what the run becomes: nothing to record.
    if (j - i > 1 || text.charCodeAt(i) === 9) {
      parts.push(text.slice(at, i), " ");
      runAt.push(i - dropped);
      dropped += j - i - 1;
      droppedAfter.push(dropped);
      at = j;
    }
    i = j - 1;
  }
  parts.push(text.slice(at));
  return {
    flat: parts.join(""),
    // Characters dropped by the runs before flatIndex, found by binary search.
    offset(flatIndex) {
      let lo = 0;
      let hi = runAt.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (runAt[mid]! < flatIndex) lo = mid + 1;
        else hi = mid;
      }
      return flatIndex + (lo > 0 ? droppedAfter[lo - 1]! : 0);
    },
  };
}

/**
 * A fragment of one line whose runs of spaces and tabs differ from the file's (`a  = 1` for `a = 1`):
 * the words must be the same and in order, only the amount of blank between them may differ. Both
 * sides have their runs collapsed to one space; a match starts and ends on a word, so its ends map
 * back to the file's offsets exactly.
 */
function fragmentMatch(text: string, e: Edit): EditOutcome | undefined {
  const words = e.oldText.trim().split(/[ \t]+/);
  if (e.oldText.includes("\n") || words.length < 2) return undefined;
  const needle = words.join(" ");
  const file = collapsedBlanks(text);
  const spans: Span[] = [];
  for (let i = file.flat.indexOf(needle); i >= 0; i = file.flat.indexOf(needle, i + needle.length)) {
    spans.push({ start: file.offset(i), end: file.offset(i + needle.length - 1) + 1, with: e.newText });
  }
  if (spans.length === 0) return undefined;
  const where = linesAt(
    text,
    spans.map((s) => s.start),
  );
  if (spans.length > 1 && !e.replaceAll) {
    return {
      error: `oldText is not unique: it matches ${spans.length} places when spacing is ignored (lines ${lineList(where)}); include more of the line, or set replaceAll`,
    };
  }
  return splicedWithin(text, spans, `oldText matched only when spacing was ignored (line ${lineList(where)})`);
}

function tokens(line: string): Set<string> {
  return new Set(line.match(/\w+|[^\s\w]+/g) ?? []);
}

function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  // Over the smaller set: a huge line on one side costs no more than the other side's tokens.
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The window of the file most like oldText, line by line, when it is at least somewhat alike. */
function nearest(text: string, oldText: string): string | undefined {
  const fileLines = text.split("\n");
  let want = modelLines(oldText).lines.map(norm);
  const haveTokens = fileLines.map((l) => tokens(norm(l)));
  const fileTokens = haveTokens.reduce((n, t) => n + t.size + 1, 0);
  if (fileTokens * want.length > NEAREST_BUDGET) want = [want.find((w) => w !== "") ?? ""];
  const wantTokens = want.map(tokens);
  let best = { at: -1, score: 0 };
  for (let i = 0; i + want.length <= fileLines.length; i++) {
    let score = 0;
    for (let j = 0; j < want.length; j++) score += similarity(wantTokens[j]!, haveTokens[i + j]!);
    if (score > best.score) best = { at: i, score };
  }
  if (best.at < 0 || best.score / want.length < 0.5) return undefined;
  const shown = fileLines.slice(best.at, best.at + Math.min(want.length, SHOWN_CANDIDATE_LINES));
  const numbered = shown.map((l, j) => `${String(best.at + j + 1).padStart(5)}\t${l.replace(/\r$/, "")}`).join("\n");
  return `the nearest candidate is at line ${best.at + 1}:\n${numbered}${want.length > SHOWN_CANDIDATE_LINES ? "\n      …" : ""}`;
}

export function applyEdit(text: string, e: Edit, crlf: boolean): EditOutcome {
  if (e.oldText === "") return { error: "oldText is empty; give the exact text to replace" };
  let { oldText, newText } = e;
  let found = indices(text, oldText);
  // Models write "\n"; a CRLF file would otherwise never match a multi-line oldText.
  if (found.length === 0 && crlf && oldText.includes("\n") && !oldText.includes("\r")) {
    oldText = oldText.replace(/\n/g, "\r\n");
    newText = newText.replace(/\r?\n/g, "\r\n");
    found = indices(text, oldText);
  }
  if (found.length > 1 && !e.replaceAll) {
    const lines = linesAt(text, found.slice(0, 6));
    return {
      error: `oldText is not unique: ${found.length} matches (lines ${lineList(lines)}); include more surrounding lines to make it unique, or set replaceAll`,
    };
  }
  if (found.length > 0) {
    return splicedWithin(
      text,
      found.map((start) => ({ start, end: start + oldText.length, with: newText })),
    );
  }
  const tolerant = tolerantMatch(text, e, crlf) ?? fragmentMatch(text, e);
  if (tolerant) return tolerant;
  const candidate = nearest(text, e.oldText);
  return {
    error: candidate
      ? `oldText not found, not even ignoring whitespace; ${candidate}\nCopy oldText exactly from the file`
      : "oldText not found, not even ignoring whitespace, and nothing in the file resembles it; read the file again and copy oldText exactly",
  };
}
