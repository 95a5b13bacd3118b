/**
 * Claude Code's hooks (issue 26): configured in the user's `<config>/settings.json` and the
 * project's `.reasonix/settings.json` and `.claude/settings.json`, run as the user with the event as
 * JSON on stdin; the project's only once the user trusts them, the answer kept per repository and
 * per content of its hook files.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describePids, pidsAfterKill } from "../support/harness.js";
import { world } from "./fixture.js";

/** The workspace as a repository root with `settings` as its `.claude/settings.json`. */
function repository(workdir: string, settings: object, file = ".claude"): string {
  mkdirSync(join(workdir, ".git"), { recursive: true });
  writeFileSync(join(workdir, ".git", "HEAD"), "ref: refs/heads/main\n");
  mkdirSync(join(workdir, file), { recursive: true });
  const path = join(workdir, file, "settings.json");
  writeFileSync(path, JSON.stringify(settings, null, 2));
  return path;
}

const hooksOf = (event: string, matcher: string | undefined, command: string, timeout?: number) => ({
  hooks: { [event]: [{ ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: "command", command, ...(timeout ? { timeout } : {}) }] }] },
});

const BLOCK_RM = `if grep -q '"command":"rm '; then echo 'rm is blocked by the project policy' >&2; exit 2; fi`;

const trustQuestions = (agent: { agentRequests: Array<{ method: string; params: any }> }) =>
  agent.agentRequests.filter((r) => r.method === "session/request_permission" && r.params.toolCall.toolCallId.startsWith("hooks_"));
const commandQuestions = (agent: { agentRequests: Array<{ method: string; params: any }> }) =>
  agent.agentRequests.filter((r) => r.method === "session/request_permission" && !r.params.toolCall.toolCallId.startsWith("hooks_"));

/** Answers the trust question with `trust`, and every other question with allow_once. */
const answering = (trust: string) => (params: any) => ({
  outcome: { outcome: "selected", optionId: params.toolCall.toolCallId.startsWith("hooks_") ? trust : "allow_once" },
});

test("a project PreToolUse hook on Bash: asked once; trusted, it blocks rm -rf (stderr to the model) and lets echo run; a second session does not ask; a changed file asks again", async (t) => {
  const { agent, model, workdir } = await world(t);
  const settings = repository(workdir, hooksOf("PreToolUse", "Bash", BLOCK_RM));
  mkdirSync(join(workdir, "x"));
  writeFileSync(join(workdir, "x", "keep.txt"), "keep\n");
  await agent.initialize();
  agent.onPermission = answering("trust");
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue(
    { toolCalls: [{ name: "run_command", arguments: { command: "rm -rf x" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "echo ok" } }] },
    { content: ["done"] },
  );
  assert.equal((await agent.prompt(sessionId, "clean up")).stopReason, "end_turn");

  const asked = trustQuestions(agent);
  assert.equal(asked.length, 1, "the first session asks once");
  const listing = JSON.stringify(asked[0]!.params.toolCall);
  assert.ok(listing.includes("rm is blocked by the project policy"), "the question lists the command");
  assert.ok(listing.includes(".claude/settings.json"), "and the file it comes from");
  assert.ok(existsSync(join(workdir, "x", "keep.txt")), "rm -rf x never ran");
  assert.match(model.requests[1]!.body.messages.at(-1).content, /Blocked by the PreToolUse hook[\s\S]*rm is blocked by the project policy/);
  assert.match(model.requests[2]!.body.messages.at(-1).content, /\bok\b/, "echo ok ran");
  assert.deepEqual(
    commandQuestions(agent).map((r) => r.params.toolCall.rawInput.command),
    ["echo ok"],
    "the blocked call never reached the permission gate",
  );

  // Another session in the same repository, the file unchanged: no question, the hook in force.
  const second = await agent.newSession(workdir);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "rm -rf x" } }] }, { content: ["ok"] });
  await agent.prompt(second.sessionId, "again");
  assert.equal(trustQuestions(agent).length, 1, "unchanged configuration: not asked again");
  assert.ok(existsSync(join(workdir, "x", "keep.txt")));
  assert.match(model.requests.at(-1)!.body.messages.at(-1).content, /Blocked by the PreToolUse hook/);

  // The file changes: the next prompt asks again, before anything of it runs.
  writeFileSync(settings, JSON.stringify(hooksOf("PreToolUse", "Bash|Write", BLOCK_RM)));
  model.enqueue({ content: ["fine"] });
  await agent.prompt(second.sessionId, "after the change");
  assert.equal(trustQuestions(agent).length, 2, "a changed hook file asks again");
});

test("project hooks not trusted never run: commands go through the usual permissions as before, and the answer is kept", async (t) => {
  const { agent, model, workdir } = await world(t);
  repository(workdir, hooksOf("PreToolUse", "Bash", `touch "${join(workdir, "hook-ran")}"; exit 2`));
  mkdirSync(join(workdir, "x"));
  await agent.initialize();
  agent.onPermission = answering("never");
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "rm -rf x" } }] }, { content: ["done"] });
  await agent.prompt(sessionId, "clean up");
  assert.equal(trustQuestions(agent).length, 1);
  assert.equal(existsSync(join(workdir, "hook-ran")), false, "the hook never ran");
  assert.deepEqual(
    commandQuestions(agent).map((r) => r.params.toolCall.rawInput.command),
    ["rm -rf x"],
    "the command was asked about as any other",
  );
  assert.equal(existsSync(join(workdir, "x")), false, "allowed by the user, it ran");

  const second = await agent.newSession(workdir);
  model.enqueue({ content: ["ok"] });
  await agent.prompt(second.sessionId, "again");
  assert.equal(trustQuestions(agent).length, 1, '"never" is kept for this content');
});

test("a UserPromptSubmit hook's stdout reaches that prompt's model request; a PostToolUse hook gets write_file's path on stdin", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  const seen = join(workdir, "post-hook.json");
  writeFileSync(
    join(home.dir, "settings.json"),
    JSON.stringify({
      hooks: {
        UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo 'Ticket context: ABC-123 is about the login page'" }] }],
        PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: `cat > "${seen}"` }] }],
      },
    }),
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: "notes/a.txt", content: "hello\n" } }] }, { content: ["done"] });
  assert.equal((await agent.prompt(sessionId, "write the note")).stopReason, "end_turn");

  const user = model.requests[0]!.body.messages.at(-1);
  assert.equal(user.role, "user");
  assert.match(user.content, /write the note[\s\S]*Ticket context: ABC-123 is about the login page/);
  const event = JSON.parse(readFileSync(seen, "utf8"));
  assert.equal(event.hook_event_name, "PostToolUse");
  assert.equal(event.session_id, sessionId);
  assert.equal(event.cwd, workdir);
  assert.equal(event.tool_name, "Write");
  assert.equal(event.tool_input.file_path, join(workdir, "notes", "a.txt"));
  assert.equal(event.tool_input.path, "notes/a.txt");
  assert.equal(event.tool_response.success, true);
  assert.deepEqual(trustQuestions(agent), [], "the user's own hooks run without asking");
});

test("a UserPromptSubmit hook that exits 2 refuses the prompt: stopReason refusal, its stderr shown, nothing sent to the model", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  writeFileSync(join(home.dir, "settings.json"), JSON.stringify(hooksOf("UserPromptSubmit", undefined, "echo 'no secrets in prompts' >&2; exit 2")));
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "my password is hunter2")).stopReason, "refusal");
  assert.equal(model.requests.length, 0);
  assert.match(
    agent.textOf(sessionId),
    /UserPromptSubmit hook `echo 'no secrets in prompts'[^`]*` \(.*settings\.json\) refused this prompt[\s\S]*no secrets in prompts/,
  );
});

test("a hook that hangs is stopped at its bound, its process group killed, and the turn goes on with a notice naming it", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  writeFileSync(
    join(home.dir, "settings.json"),
    JSON.stringify(hooksOf("PreToolUse", "list_directory", `sleep 31.${process.pid} & sleep 30.${process.pid}`, 1)),
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ toolCalls: [{ name: "list_directory", arguments: {} }] }, { content: ["listed"] });
  assert.equal((await agent.prompt(sessionId, "list")).stopReason, "end_turn");
  assert.match(
    agent.textOf(sessionId),
    new RegExp(`PreToolUse hook \`sleep 31\\.${process.pid}[^\`]*\` \\(.*settings\\.json\\) did not finish within 1 s and was stopped`),
  );
  const result = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .at(-1);
  assert.equal(result.status, "completed", "the call itself ran");
  const left = await pidsAfterKill([`sleep 31.${process.pid}`, `sleep 30.${process.pid}`]);
  assert.deepEqual(left, [], `the whole group is gone:\n${describePids(left)}`);
});

test("malformed settings files are named once with their path and left out; the others still count", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  writeFileSync(join(home.dir, "settings.json"), "{ not json");
  repository(workdir, { hooks: { PreToolUse: "nope" } }, ".reasonix");
  mkdirSync(join(workdir, ".claude"));
  writeFileSync(join(workdir, ".claude", "settings.json"), JSON.stringify(hooksOf("UserPromptSubmit", undefined, "echo from-the-good-file")));
  await agent.initialize();
  agent.onPermission = answering("trust");
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["one"] }, { content: ["two"] });
  await agent.prompt(sessionId, "first");
  const text = agent.textOf(sessionId);
  assert.ok(text.includes(`Ignored ${join(home.dir, "settings.json")}: it is not valid JSON`), text);
  assert.match(text, /Ignored \.reasonix\/settings\.json: hooks\.PreToolUse: /);
  assert.match(model.requests[0]!.body.messages.at(-1).content, /from-the-good-file/, "the good file's hook ran");
  const from = agent.updates.length;
  await agent.prompt(sessionId, "second");
  assert.doesNotMatch(agent.textOf(sessionId, "agent_message_chunk", from), /Ignored/, "said once");
});

test("SessionStart's stdout joins the session's first prompt only; Stop runs after the turn with the event on stdin; output is cut at 64 KiB", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  const stopped = join(workdir, "stop.json");
  writeFileSync(
    join(home.dir, "settings.json"),
    JSON.stringify({
      hooks: {
        SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: "echo 'Started: read CONTRIBUTING first'" }] }],
        UserPromptSubmit: [{ hooks: [{ type: "command", command: "head -c 100000 /dev/zero | tr '\\0' z" }] }],
        Stop: [{ hooks: [{ type: "command", command: `cat > "${stopped}"` }] }],
      },
    }),
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["one"] }, { content: ["two"] });
  await agent.prompt(sessionId, "first");
  await agent.prompt(sessionId, "second");
  const [first, second] = model.requests.map((r) => r.body.messages.at(-1).content as string);
  assert.match(first!, /^first\n\n\[Context from the SessionStart hook[^\n]*\nStarted: read CONTRIBUTING first/);
  assert.doesNotMatch(second!, /SessionStart/, "once per session");
  assert.ok(second!.includes("z".repeat(64 * 1024)), "64 KiB of the output");
  assert.ok(!second!.includes("z".repeat(64 * 1024 + 1)), "and no more");
  assert.match(second!, /\[… 34464 more bytes cut: a hook's output is kept up to 64 KiB\]/);
  const stop = JSON.parse(readFileSync(stopped, "utf8"));
  assert.equal(stop.hook_event_name, "Stop");
  assert.equal(stop.session_id, sessionId);
  assert.equal(stop.stop_reason, "end_turn");
});
