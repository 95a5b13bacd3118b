import { z } from "zod";
import { defineTool } from "../types.js";
import { FetchError, MAX_BODY_BYTES, boundedGet, checkUrl } from "../http-get.js";
import { PrivateAddressError } from "../net-guard.js";
import { pageText } from "../page-text.js";
import { errorText } from "../../../shared/error-text.js";
import { failure, textContent } from "./common.js";

/** What the model reads at most of one page; the rest is cut with a note. */
export const MAX_PAGE_CHARS = 60_000;

/** Why a URL cannot be fetched at all, before anyone is asked about it. */
function urlProblem(url: string): string | undefined {
  try {
    checkUrl(url);
    return undefined;
  } catch (err) {
    return errorText(err);
  }
}

const args = z.object({
  url: z
    .string()
    .min(1)
    .superRefine((url, c) => {
      const problem = urlProblem(url);
      if (problem) c.addIssue({ code: "custom", message: problem });
    })
    .describe("The http:// or https:// URL to fetch."),
});

/** The host the permission question names; an unusable URL is refused when the call runs. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

export const webFetchTool = defineTool({
  name: "web_fetch",
  description:
    "Fetch a web page over HTTP(S) and read it as Markdown (HTML is converted; plain text and JSON come as they are). " +
    "Use it for documentation, issues or references the user points you to. The user is asked before the first fetch from each site. " +
    "Redirects to another site are not followed: fetch the new URL. Loopback and private-network addresses are refused unless the user allowed them.",
  args,
  kind: "fetch",
  title: (a) => `Fetch ${a.url}`,
  access: (a) => ({ type: "fetch", url: a.url, host: hostOf(a.url) }),
  async run(a, ctx) {
    let got: Awaited<ReturnType<typeof boundedGet>>;
    try {
      got = await boundedGet(checkUrl(a.url), ctx.allowPrivateNetwork, ctx.signal);
    } catch (err) {
      if (err instanceof FetchError || err instanceof PrivateAddressError) return failure(`Refused: ${err.message}.`);
      if (ctx.signal.aborted) return failure("Cancelled.");
      const reason = (err as Error)?.name === "TimeoutError" || (err as Error)?.name === "AbortError" ? "it took too long" : errorText(err);
      return failure(`Could not fetch ${a.url}: ${reason}`);
    }
    if (got.kind === "offHost") {
      return failure(
        `${got.url} redirects (${got.status}) to ${got.location}, on another host; it was not followed. Call web_fetch with that URL if you need it.`,
      );
    }
    if (got.status >= 400) return failure(`${got.url} answered HTTP ${got.status}.`);
    let page: Awaited<ReturnType<typeof pageText>>;
    try {
      page = await pageText(got.contentType, got.body, got.url, ctx.signal);
    } catch (err) {
      return failure(ctx.signal.aborted ? "Cancelled." : `Could not read ${got.url} as text: ${errorText(err)}`);
    }
    if (!page.ok) return failure(`Not fetched as text: ${page.reason}.`);
    const notes: string[] = [];
    if (got.truncated) notes.push(`the page is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB; only its start was read`);
    let text = page.text;
    if (text.length > MAX_PAGE_CHARS) {
      notes.push(`cut at ${MAX_PAGE_CHARS} of ${text.length} characters`);
      text = text.slice(0, MAX_PAGE_CHARS);
    }
    const head = [`URL: ${got.url}`, ...(page.title ? [`Title: ${page.title}`] : [])].join("\n");
    const output = `${head}\n\n${text}${notes.length ? `\n\n[${notes.join("; ")}]` : ""}`;
    return { output, content: [textContent(output)], rawOutput: { url: got.url, status: got.status, contentType: got.contentType, bytes: got.body.length } };
  },
});
