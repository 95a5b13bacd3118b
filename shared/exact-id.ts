/** Request ids JavaScript numbers cannot hold exactly. */
/**
 * A numeric request id that a JavaScript number would round (18446744073709551617 parses as
 * 18446744073709552000): kept as its JSON text, so the answer echoes the id exactly.
 */
export class ExactId {
  constructor(readonly text: string) {}
}

/** The JSON text of the top-level "id" member's value, found without parsing the rest. */
export function rawTopLevelId(text: string): string | undefined {
  let depth = 0;
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const str = text.slice(i + 1, j);
      i = j + 1;
      if (depth === 1 && expectKey) {
        expectKey = false;
        while (/\s/.test(text[i] ?? "")) i++;
        if (text[i] !== ":") continue;
        i++;
        while (/\s/.test(text[i] ?? "")) i++;
        if (str === "id") return /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i))?.[0];
      }
      continue;
    }
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    if (depth === 1 && (c === "{" || c === ",")) expectKey = true;
    i++;
  }
  return undefined;
}
