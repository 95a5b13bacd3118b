/**
 * Everything read on the model's behalf stays inside (issue 22, least authority): the files the
 * daemon reads on its own account (instruction files, command folders) and what grep, glob and
 * list_directory return never come from a link that leads out of the session's folders, and the
 * user is told what was skipped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_API_KEY } from "../support/harness.js";
import type { RecordedRequest } from "../support/scripted-model.js";
import { world } from "./fixture.js";

const select = (optionId: string) => () => ({ outcome: { outcome: "selected", optionId } });

/** A folder outside the workspace, removed after the test. */
function outsideFolder(t: { after(fn: () => void): void }): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "rx-outside-")));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * What must never reach the model: this process's own environment as /proc/self/environ holds it
 * (the in-process daemon is this process), as `NAME=VALUE` lines and, for secret-looking names,
 * the value alone.
 */
function environNeedles(): string[] {
  const entries = readFileSync("/proc/self/environ", "utf8")
    .split("\0")
    .filter((e) => e.includes("="));
  const secretish = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH/i;
  const values = entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)] as const);
  return [...entries.filter((e) => e.length > 8), ...values.filter(([name, value]) => secretish.test(name) && value.length >= 6).map(([, value]) => value)];
}

/** Every text a request carried, both as sent (JSON) and as the model reads it. */
function haystack(requests: readonly RecordedRequest[]): string {
  return requests.map((r) => `${r.rawBody}\n${(r.body?.messages ?? []).map((m: { content?: unknown }) => String(m.content ?? "")).join("\n")}`).join("\n");
}

function assertNoneOf(text: string, needles: readonly string[], where: string): void {
  for (const needle of needles) assert.ok(!text.includes(needle), `${where} holds ${JSON.stringify(needle.slice(0, 40))}`);
}

test("instruction files linking to /proc/self/environ or outside the repository are skipped and named; an inside link still loads; nothing secret reaches the model", async (t) => {
  const canary = `rx-canary-${randomBytes(8).toString("hex")}`;
  const previous = process.env.RX_TEST_CANARY_SECRET;
  process.env.RX_TEST_CANARY_SECRET = canary;
  t.after(() => {
    if (previous === undefined) delete process.env.RX_TEST_CANARY_SECRET;
    else process.env.RX_TEST_CANARY_SECRET = previous;
  });
  const windowSecrets = { AWS_SECRET_ACCESS_KEY: `aws-${randomBytes(12).toString("hex")}`, GITHUB_TOKEN: `ghp_${randomBytes(12).toString("hex")}` };
  const { agent, model, workdir, spawn } = await world(t, { env: windowSecrets });
  const outside = outsideFolder(t);
  const marker = `OUTSIDE-MARKER-${randomBytes(6).toString("hex")}`;
  writeFileSync(join(outside, "notes.md"), `${marker}\n`);
  // The workspace is a repository; the session works in a package below its root.
  mkdirSync(join(workdir, ".git"));
  writeFileSync(join(workdir, ".git", "HEAD"), "ref: refs/heads/main\n");
  mkdirSync(join(workdir, "docs"));
  mkdirSync(join(workdir, "pkg"));
  writeFileSync(join(workdir, "docs", "rules.md"), "Inside rule: keep the tests green.\n");
  symlinkSync("/proc/self/environ", join(workdir, "AGENTS.md"));
  symlinkSync(join(outside, "notes.md"), join(workdir, "REASONIX.md"));
  symlinkSync("../docs/rules.md", join(workdir, "pkg", "REASONIX.md"));
  const pkg = join(workdir, "pkg");

  await agent.initialize();
  const { sessionId } = await agent.newSession(pkg);
  const notice = await agent.waitForUpdate((u) => u.sessionId === sessionId && u.update._meta?.["reasonix.io"]?.kind === "notice");
  const said: string = notice.update.content.text;
  assert.match(
    said,
    new RegExp(`\\[notice\\] Skipped ${join(workdir, "AGENTS.md")}: it links outside the repository and the session's folders \\(to /proc/\\d+/environ\\)\\.`),
  );
  assert.ok(
    said.includes(
      `[notice] Skipped ${join(workdir, "REASONIX.md")}: it links outside the repository and the session's folders (to ${join(outside, "notes.md")}).`,
    ),
    said,
  );
  assert.equal(notice.update.sessionUpdate, "agent_message_chunk");

  model.enqueue({ content: ["hello"] });
  await agent.prompt(sessionId, "hi");
  const system: string = model.requests[0]!.body.messages[0].content;
  assert.ok(system.includes(`## ${join(pkg, "REASONIX.md")}\n\nInside rule: keep the tests green.`), "the link that stays inside is loaded");
  assert.match(system, /Git repository: yes, at .*, on branch main/);
  const needles = [TEST_API_KEY, ...Object.values(windowSecrets), canary, marker, ...environNeedles()];
  assertNoneOf(haystack(model.requests), needles, "a model request");

  // /reload says the same about the links it skipped.
  const from = agent.updates.length;
  await agent.prompt(sessionId, "/reload");
  const reloaded = agent.textOf(sessionId, "agent_message_chunk", from);
  assert.match(reloaded, /Project instructions unchanged\.\n- .*pkg\/REASONIX\.md\nSkipped .*\/AGENTS\.md: it links outside/);
  assert.ok(reloaded.includes(`Skipped ${join(workdir, "REASONIX.md")}`));

  // The notice is in the ledger: a window that loads the session later gets it too.
  const later = spawn();
  await later.initialize();
  await later.rpc.request("session/load", { sessionId, cwd: pkg, mcpServers: [] });
  const replayed = later.updatesFor(sessionId).filter((u) => u._meta?.["reasonix.io"]?.kind === "notice");
  assert.deepEqual(
    replayed.map((u) => u.content.text),
    [said],
  );
  assertNoneOf(JSON.stringify(later.updatesFor(sessionId)), [marker, canary, ...Object.values(windowSecrets)], "the replay");
});

test("read-only, every question rejected: grep and glob follow no link out and name the links; list_directory and read_file of a link out ask", async (t) => {
  const { agent, model, workdir } = await world(t);
  const outside = outsideFolder(t);
  const secret = `-----BEGIN OPENSSH PRIVATE KEY----- ${randomBytes(12).toString("hex")}`;
  writeFileSync(join(outside, "id_ed25519"), `${secret}\n`);
  writeFileSync(join(outside, "other.txt"), "a file in the outside folder\n");
  mkdirSync(join(workdir, "docs"));
  writeFileSync(join(workdir, "docs", "readme.md"), "Inside text.\n");
  symlinkSync(join(outside, "id_ed25519"), join(workdir, "docs", "setup.md"));
  symlinkSync("/proc/self/environ", join(workdir, "env.txt"));
  symlinkSync(outside, join(workdir, "linked"));

  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  agent.onPermission = select("reject_once");
  model.enqueue(
    {
      toolCalls: [
        { id: "grep", name: "grep", arguments: { pattern: "." } },
        { id: "glob", name: "glob", arguments: { pattern: "**" } },
        { id: "list", name: "list_directory", arguments: {} },
        { id: "list-out", name: "list_directory", arguments: { path: "linked" } },
        { id: "read-out", name: "read_file", arguments: { path: "docs/setup.md" } },
        { id: "grep-env", name: "grep", arguments: { pattern: ".", path: "env.txt" } },
      ],
    },
    { content: ["done"] },
  );
  assert.equal((await agent.prompt(sessionId, "look around")).stopReason, "end_turn");

  // The daemon names calls itself; what each call was is in its rawInput.
  const inputs = new Map(
    agent
      .updatesFor(sessionId)
      .filter((u) => u.sessionUpdate === "tool_call")
      .map((u) => [u.toolCallId, JSON.stringify(u.rawInput)]),
  );
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission").map((r) => inputs.get(r.params.toolCall.toolCallId));
  assert.deepEqual(
    asked.sort(),
    ['{"path":"docs/setup.md"}', '{"path":"linked"}', '{"pattern":".","path":"env.txt"}'],
    "reads inside run; every read that leads outside asks",
  );

  const tools = model.requests[1]!.body.messages.filter((m: { role: string }) => m.role === "tool");
  const result = (id: string): string => tools.find((m: { tool_call_id: string }) => m.tool_call_id === id).content;
  assert.match(result("grep"), /^docs\/readme\.md:1: Inside text\./);
  assert.match(
    result("grep"),
    /\[Skipped 2 links that lead outside the workspace folders: docs\/setup\.md, env\.txt\. read_file on one asks the user first\.\]$/,
  );
  assert.ok(!result("glob").split("\n").includes("docs/setup.md") && !result("glob").split("\n").includes("env.txt"), result("glob"));
  assert.ok(result("glob").split("\n").includes("docs/readme.md"));
  assert.match(result("glob"), /Skipped 2 links that lead outside the workspace folders: docs\/setup\.md, env\.txt\./);
  // The names of the workspace's own entries are inside; a linked folder is not entered.
  assert.deepEqual(result("list").split("\n"), ["docs/", "env.txt", "linked/"]);
  for (const id of ["list-out", "read-out", "grep-env"]) assert.doesNotMatch(result(id), /other\.txt|PRIVATE KEY/, id);

  const shown = JSON.stringify(agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "tool_call_update"));
  const needles = [secret, "a file in the outside folder", "other.txt", ...environNeedles()];
  assertNoneOf(shown, needles, "a tool_call_update");
  assertNoneOf(haystack(model.requests), needles, "a model request");
});

test("a .reasonix/commands folder that links outside gives no commands; in a real one a file linking out is skipped, one linking inside works", async (t) => {
  const { agent, workdir } = await world(t);
  const outside = outsideFolder(t);
  writeFileSync(join(outside, "leak.md"), "---\ndescription: Leaked\n---\nOUTSIDE TEMPLATE\n");
  const linked = join(workdir, "linked");
  mkdirSync(join(linked, ".reasonix"), { recursive: true });
  symlinkSync(outside, join(linked, ".reasonix", "commands"));
  const real = join(workdir, "real");
  mkdirSync(join(real, ".reasonix", "commands"), { recursive: true });
  writeFileSync(join(real, "shared.md"), "---\ndescription: Shared inside\n---\nShared body\n");
  symlinkSync("../../shared.md", join(real, ".reasonix", "commands", "shared.md"));
  symlinkSync(join(outside, "leak.md"), join(real, ".reasonix", "commands", "leak.md"));

  await agent.initialize();
  const names = (sessionId: string): string[] =>
    agent
      .updatesFor(sessionId)
      .filter((u) => u.sessionUpdate === "available_commands_update")
      .at(-1)
      .availableCommands.map((c: { name: string }) => c.name);
  const notices = (sessionId: string): string =>
    agent
      .updatesFor(sessionId)
      .filter((u) => u._meta?.["reasonix.io"]?.kind === "notice")
      .map((u) => u.content.text)
      .join("\n");

  const a = (await agent.newSession(linked)).sessionId;
  await agent.waitForUpdate((u) => u.sessionId === a && u.update.sessionUpdate === "available_commands_update");
  assert.ok(!names(a).includes("leak"));
  assert.equal(
    notices(a),
    `[notice] Skipped ${join(linked, ".reasonix", "commands")}: it links outside the repository and the session's folders (to ${outside}).\n\n`,
  );

  // /reload names the folder it skipped again.
  const from = agent.updates.length;
  await agent.prompt(a, "/reload");
  assert.ok(agent.textOf(a, "agent_message_chunk", from).includes(`Skipped ${join(linked, ".reasonix", "commands")}: it links outside`));

  const b = (await agent.newSession(real)).sessionId;
  await agent.waitForUpdate((u) => u.sessionId === b && u.update.sessionUpdate === "available_commands_update");
  assert.ok(names(b).includes("shared") && !names(b).includes("leak"), names(b).join(" "));
  assert.equal(
    notices(b),
    `[notice] Skipped ${join(real, ".reasonix", "commands", "leak.md")}: it links outside the repository and the session's folders (to ${join(outside, "leak.md")}).\n\n`,
  );
});
