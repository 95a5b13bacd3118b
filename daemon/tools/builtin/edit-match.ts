/**
 * One search/replace edit applied to a file's text, or the reason it cannot be, in words the model
 * can act on. An exact match comes first; when there is none, a match that ignores whitespace
 * (indentation, runs of spaces, trailing blanks) is tried on whole lines, and the new text is
 * re-indented to the file's indentation. When both fail, the diagnosis names the nearest candidate.
 */

export interface Edit {
  oldText: string;
  newText: string;
  replaceAll?: boolean | undefined;
}

export type EditOutcome = { text: string; note?: string } | { error: string };

/** Windows × lines compared at most when looking for the nearest candidate; past it only the first line is used. */
const NEAREST_BUDGET = 200_000;
const SHOWN_CANDIDATE_LINES = 8;
const SHOWN_LINE_NUMBERS = 5;

function indices(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
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

function wholeLineMatches(have: string[], want: string[]): number[] {
  const found: number[] = [];
  for (let i = 0; i + want.length <= have.length; i++) {
    if (want.every((w, j) => have[i + j] === w)) found.push(i);
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
  let out = text;
  let moved = false;
  // From the last match back, so earlier offsets stay valid.
  for (const i of [...found].reverse()) {
    const last = i + want.length - 1;
    let end: number;
    if (old.endsLine) end = last + 1 < fileLines.length ? starts[last + 1]! : text.length;
    else end = starts[last]! + fileLines[last]!.replace(/\r$/, "").length;
    const r = reindent(e.newText.replace(/\r\n/g, "\n"), old.lines, fileLines.slice(i, last + 1));
    moved ||= r.moved;
    const replacement = crlf ? r.text.replace(/\n/g, "\r\n") : r.text;
    out = out.slice(0, starts[i]!) + replacement + out.slice(end);
  }
  const note = `oldText matched only when whitespace was ignored (line ${lineList(where)})${moved ? "; newText was re-indented to the file's indentation" : ""}`;
  return { text: out, note };
}

/**
 * A fragment of one line whose runs of spaces and tabs differ from the file's (`a  = 1` for `a = 1`):
 * the words must be the same and in order, only the amount of blank between them may differ.
 */
function fragmentMatch(text: string, e: Edit): EditOutcome | undefined {
  const words = e.oldText.trim().split(/[ \t]+/);
  if (e.oldText.includes("\n") || words.length < 2) return undefined;
  const pattern = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[ \\t]+"), "g");
  const found = [...text.matchAll(pattern)];
  if (found.length === 0) return undefined;
  const where = found.map((m) => lineAt(text, m.index));
  if (found.length > 1 && !e.replaceAll) {
    return {
      error: `oldText is not unique: it matches ${found.length} places when spacing is ignored (lines ${lineList(where)}); include more of the line, or set replaceAll`,
    };
  }
  let out = text;
  for (const m of found.reverse()) out = out.slice(0, m.index) + e.newText + out.slice(m.index + m[0].length);
  return { text: out, note: `oldText matched only when spacing was ignored (line ${lineList(where)})` };
}

function tokens(line: string): Set<string> {
  return new Set(line.match(/\w+|[^\s\w]+/g) ?? []);
}

function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The window of the file most like oldText, line by line, when it is at least somewhat alike. */
function nearest(text: string, oldText: string): string | undefined {
  const fileLines = text.split("\n");
  let want = modelLines(oldText).lines.map(norm);
  if (fileLines.length * want.length > NEAREST_BUDGET) want = [want.find((w) => w !== "") ?? ""];
  const wantTokens = want.map(tokens);
  const haveTokens = fileLines.map((l) => tokens(norm(l)));
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
    const lines = found.map((i) => lineAt(text, i));
    return {
      error: `oldText is not unique: ${found.length} matches (lines ${lineList(lines)}); include more surrounding lines to make it unique, or set replaceAll`,
    };
  }
  if (found.length === 1) return { text: text.slice(0, found[0]) + newText + text.slice(found[0]! + oldText.length) };
  if (found.length > 1) return { text: text.split(oldText).join(newText) };
  const tolerant = tolerantMatch(text, e, crlf) ?? fragmentMatch(text, e);
  if (tolerant) return tolerant;
  const candidate = nearest(text, e.oldText);
  return {
    error: candidate
      ? `oldText not found, not even ignoring whitespace; ${candidate}\nCopy oldText exactly from the file`
      : "oldText not found, not even ignoring whitespace, and nothing in the file resembles it; read the file again and copy oldText exactly",
  };
}
