/**
 * The user's trust in a repository's hooks: they are code from the repository, run as the user
 * outside any sandbox, so they run only once the user said yes. The answer is kept in the store per
 * repository (`hooktrust!<sha256 of its real path>`) together with the hash of the hook files it
 * was given for: a changed file, or one more, asks again.
 */
import { createHash, randomUUID } from "node:crypto";
import type { PermissionOption, RequestPermissionOutcome, SessionUpdate, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { keyspace } from "../store/keyspace.js";
import type { Store } from "../store/store.js";
import type { Hook } from "./config.js";

export interface TrustRecord {
  repository: string;
  /** `projectHash` of the files the answer was given for. */
  hash: string;
  trusted: boolean;
  at: string;
}

export interface TrustHost {
  store: Store;
  emit(update: SessionUpdate): void;
  /** A permission question to the session's windows; the decision is recorded in the ledger. */
  ask(toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<RequestPermissionOutcome>;
}

export function trustKey(repository: string): string {
  return keyspace.hookTrust.key(createHash("sha256").update(repository).digest("hex"));
}

/** The stored answer for exactly these files; undefined when none was kept or the files changed since. */
export async function storedTrust(store: Store, repository: string, hash: string): Promise<boolean | undefined> {
  const kept = await store.get<TrustRecord>(trustKey(repository));
  return kept?.hash === hash ? kept.trusted : undefined;
}

const OPTIONS: PermissionOption[] = [
  { optionId: "trust", name: "Trust and run them (kept for this repository until the files change)", kind: "allow_always" },
  { optionId: "not_now", name: "Not in this session", kind: "reject_once" },
  { optionId: "never", name: "Never run them (kept until the files change)", kind: "reject_always" },
];

/** The question, with every command and where it comes from; true when the user trusts them. */
export async function askTrust(host: TrustHost, repository: string, hash: string, hooks: readonly Hook[], signal: AbortSignal): Promise<boolean> {
  const toolCallId = `hooks_${randomUUID()}`;
  const listing = hooks.map((h) => `- ${h.event}${h.matcher ? ` (${h.matcher})` : ""}: \`${h.command}\` — ${h.source}`).join("\n");
  const text = `This repository configures hooks: commands that run on your machine, as you, outside the command sandbox, when these events happen.\n\n${listing}`;
  const content: ToolCallContent[] = [{ type: "content", content: { type: "text", text } }];
  const title = `Run the hooks configured in ${repository}?`;
  const rawInput = { repository, hooks: hooks.map((h) => h.command) };
  const toolCall: ToolCallUpdate = { toolCallId, title, kind: "execute", status: "pending", content, rawInput };
  host.emit({ sessionUpdate: "tool_call", toolCallId, title, kind: "execute", status: "pending", content, rawInput });
  const outcome = await host.ask(toolCall, OPTIONS, signal);
  const chosen = outcome.outcome === "selected" ? outcome.optionId : "cancelled";
  const trusted = chosen === "trust";
  if (chosen === "trust" || chosen === "never") {
    const record: TrustRecord = { repository, hash, trusted, at: new Date().toISOString() };
    // A store that cannot take it now: the answer still holds for this session, and the next asks again.
    await host.store.batch([{ type: "put", key: trustKey(repository), value: record }], true).catch(() => undefined);
  }
  const said = trusted
    ? "Trusted: the repository's hooks run."
    : `Not trusted: the repository's hooks do not run${chosen === "never" ? " (until their files change)" : " in this session"}; tool calls go through the usual permissions.`;
  host.emit({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: trusted ? "completed" : "failed",
    content: [{ type: "content", content: { type: "text", text: said } }],
  });
  return trusted;
}
