/**
 * A small glob → RegExp converter (Node 20 has no fs.glob). Supports `**`, `*`, `?`, `{a,b}` and
 * `[abc]`/`[!abc]`; patterns match `/`-separated paths relative to the search root.
 */

const REGEX_SPECIAL = /[.+^$()|\\[\]{}*?]/;

export function hasMagic(s: string): boolean {
  return /[*?{[]/.test(s);
}

export function globToRegExp(glob: string): RegExp {
  let re = "";
  let braces = 0;
  // No "]" at or after this index: a "[" past it is a plain character without another search
  // (one search per "[" would make a long run of them quadratic).
  let noCloseFrom = glob.length;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      let j = i + 1;
      while (glob[j] === "*") j++;
      const prev = glob[i - 1];
      const segmentStart = i === 0 || prev === "/" || (braces > 0 && (prev === "{" || prev === ","));
      if (j - i >= 2 && segmentStart && glob[j] === "/") {
        re += "(?:.*/)?";
        j++;
        // "**/**/" says no more than "**/"; each repeat would multiply the ways a failing path is tried.
        while (glob.startsWith("**/", j)) j += 3;
      } else if (j - i >= 2 && segmentStart && (j === glob.length || (braces > 0 && /[,}]/.test(glob[j]!)))) {
        re += ".*";
      } else {
        re += "[^/]*";
      }
      i = j - 1;
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "{") {
      braces++;
      re += "(?:";
    } else if (c === "," && braces > 0) {
      re += "|";
    } else if (c === "}" && braces > 0) {
      braces--;
      re += ")";
    } else if (c === "[") {
      const end = i + 2 < noCloseFrom ? glob.indexOf("]", i + 2) : -1;
      if (end < 0) {
        noCloseFrom = Math.min(noCloseFrom, i + 2);
        re += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end).replace(/\\/g, "\\\\");
      if (body[0] === "!" || body[0] === "^") body = `^${body.slice(1)}`;
      re += `[${body}]`;
      i = end;
    } else if (c === "\\" && i + 1 < glob.length) {
      i++;
      re += escapeChar(glob[i]!);
    } else {
      re += escapeChar(c);
    }
  }
  if (braces > 0) throw new Error(`invalid glob "${glob}": unclosed "{"`);
  return new RegExp(`^${re}$`);
}

function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

/**
 * Splits the literal leading folders off a pattern ("src/lib/**\/*.ts" → "src/lib" + "**\/*.ts") so
 * the walk starts where matches can be, and so an absolute or `..` pattern names its real root.
 */
export function splitGlob(pattern: string): { prefix: string; rest: string } {
  const parts = pattern.split("/");
  let n = 0;
  while (n < parts.length - 1 && !hasMagic(parts[n]!)) n++;
  const prefix = parts.slice(0, n).join("/") || (pattern.startsWith("/") ? "/" : "");
  return { prefix, rest: parts.slice(n).join("/") };
}
