import type { ContentBlock } from "../../shared/acp-schemas.js";
import { clipForModel, MAX_PROMPT_CHARS } from "../tools/clip.js";

/**
 * What the model reads of a prompt: text as typed, embedded text resources with their URI, and
 * links as references. Binary resources, images and audio are not advertised, so they are noted
 * rather than silently dropped. A prompt over MAX_PROMPT_CHARS (a pasted log of megabytes) keeps
 * its head and tail with a note: the model reads what fits its context and knows what it missed.
 */
export function promptToText(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case "text":
        parts.push(b.text);
        break;
      case "resource":
        if ("text" in b.resource) {
          parts.push(`<resource uri="${b.resource.uri}">\n${b.resource.text}\n</resource>`);
        } else {
          parts.push(`[binary resource ${b.resource.uri} omitted]`);
        }
        break;
      case "resource_link":
        parts.push(`[${b.name}](${b.uri})`);
        break;
      case "image":
      case "audio":
        parts.push(`[${b.type} attachment omitted: this agent reads text only]`);
        break;
    }
  }
  return clipForModel(
    parts.join("\n\n").trim(),
    MAX_PROMPT_CHARS,
    "the user's message",
    "Tell the user it was cut, and ask for the part that matters if it is not shown.",
  );
}

export function titleFrom(text: string): string {
  const line =
    text
      .split("\n")
      .find((l) => l.trim().length > 0)
      ?.trim() ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
