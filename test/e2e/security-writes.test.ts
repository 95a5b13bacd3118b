/**
 * Least authority for writes (issue 22): paths that become code elsewhere (.git, hooks, editor and
 * agent settings) ask even in workspace-write, whichever route the write takes; a write lands on
 * the path the gate judged or nowhere.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeEditor } from "../support/editor.js";
import { within, world } from "./fixture.js";

const GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
const write = (path: string, content: string) => ({ toolCalls: [{ name: "write_file", arguments: { path, content } }] });
const option = (kind: string) => (params: any) => ({ outcome: { outcome: "selected", optionId: params.options.find((o: any) => o.kind === kind).optionId } });
const questions = (agent: { agentRequests: Array<{ method: string; params: any }> }) =>
  agent.agentRequests.filter((r) => r.method === "session/request_permission").map((r) => r.params);

function gitRepo(workdir: string): void {
  mkdirSync(join(workdir, ".git", "hooks"), { recursive: true });
  writeFileSync(join(workdir, ".git", "config"), GIT_CONFIG);
}

test("workspace-write: writes to .git/config, a git hook and a husky hook ask and a rejection changes nothing; src/a.txt in the same turn lands unasked", async (t) => {
  const { agent, model, workdir } = await world(t);
  gitRepo(workdir);
  const fsmonitor = `${GIT_CONFIG}\tfsmonitor = "touch /tmp/pwned"\n`;
  model.enqueue(
    write(".git/config", fsmonitor),
    write(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"),
    write(".husky/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"),
    write("src/a.txt", "ordinary\n"),
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = option("reject_once");
  assert.equal((await within(15_000, "the turn", agent.prompt(sessionId, "set up hooks"))).stopReason, "end_turn");

  const asked = questions(agent);
  assert.deepEqual(
    asked.map((q) => q.toolCall.locations[0].path),
    [".git/config", ".git/hooks/pre-commit", ".husky/pre-commit"].map((p) => join(workdir, p)),
  );
  for (const q of asked) {
    // The question says why it asks, and what an "always" would cover.
    assert.match(q.toolCall.title, /^Write \.(git|husky)\/\S+ \(protected path: /);
    assert.match(q.options.find((o: any) => o.kind === "allow_always").name, /\(a protected path: \.(git|husky); this path only\)$/);
  }
  assert.equal(readFileSync(join(workdir, ".git", "config"), "utf8"), GIT_CONFIG);
  assert.equal(existsSync(join(workdir, ".git", "hooks", "pre-commit")), false);
  assert.equal(existsSync(join(workdir, ".husky")), false);
  assert.equal(readFileSync(join(workdir, "src", "a.txt"), "utf8"), "ordinary\n");
  const results = model.requests.slice(1, 5).map((r) => r.body.messages.at(-1).content);
  for (const r of results.slice(0, 3)) assert.match(r, /The user rejected the request to write/);
  assert.match(results[3]!, /Created src\/a\.txt/);
});

test("an allow_always on .git/config covers that path only: the second write to it does not ask, a hook still does", async (t) => {
  const { agent, model, workdir } = await world(t);
  gitRepo(workdir);
  model.enqueue(write(".git/config", `${GIT_CONFIG}# one\n`), write(".git/config", `${GIT_CONFIG}# two\n`), write(".git/hooks/post-commit", "#!/bin/sh\n"), {
    content: ["done"],
  });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = (params) => option(params.toolCall.locations[0].path.endsWith("/.git/config") ? "allow_always" : "reject_once")(params);
  await within(15_000, "the turn", agent.prompt(sessionId, "configure"));
  const asked = questions(agent);
  assert.deepEqual(
    asked.map((q) => q.toolCall.locations[0].path),
    [join(workdir, ".git/config"), join(workdir, ".git/hooks/post-commit")],
  );
  assert.equal(readFileSync(join(workdir, ".git", "config"), "utf8"), `${GIT_CONFIG}# two\n`);
  assert.equal(existsSync(join(workdir, ".git", "hooks", "post-commit")), false);
});

test("danger-full-access asks nothing for protected paths; read-only asks and says why", async (t) => {
  const { agent, model, workdir } = await world(t);
  gitRepo(workdir);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  model.enqueue(write(".git/hooks/pre-commit", "#!/bin/sh\n"), write(".envrc", "export A=1\n"), { content: ["done"] });
  agent.onPermission = () => {
    throw new Error("nothing may ask under danger-full-access");
  };
  await within(15_000, "the turn", agent.prompt(sessionId, "go"));
  assert.deepEqual(questions(agent), []);
  assert.equal(readFileSync(join(workdir, ".git", "hooks", "pre-commit"), "utf8"), "#!/bin/sh\n");
  assert.equal(readFileSync(join(workdir, ".envrc"), "utf8"), "export A=1\n");

  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  model.enqueue(write(".vscode/tasks.json", "{}\n"), { content: ["done"] });
  agent.onPermission = option("reject_once");
  await within(15_000, "the turn", agent.prompt(sessionId, "go"));
  assert.match(questions(agent)[0].toolCall.title, /^Write \.vscode\/tasks\.json \(protected path: the editor runs/);
  assert.equal(existsSync(join(workdir, ".vscode")), false);
});

test("a nested repository, a case-folded name, a link to .git and an editor-routed write all ask; a rejection sends nothing to the editor", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false } });
  const editor = new FakeEditor();
  editor.attach(agent);
  gitRepo(workdir);
  mkdirSync(join(workdir, "vendor", "lib", ".git"), { recursive: true });
  symlinkSync(join(workdir, ".git"), join(workdir, "gitlink"));
  // A `.git` that is itself a link to a folder with an ordinary name (as the repo tool makes them).
  mkdirSync(join(workdir, "vendor", "store"), { recursive: true });
  symlinkSync(join(workdir, "vendor", "store"), join(workdir, "vendor", ".git"));
  model.enqueue(
    write("vendor/lib/.git/config", "x\n"),
    write(".GIT/config", "x\n"),
    write("gitlink/hooks/pre-push", "x\n"),
    write("vendor/.git/hooks/pre-push", "x\n"),
    write(".claude/settings.json", "{}\n"),
    write(".envrc.example", "export A=1\n"),
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = option("reject_once");
  await within(15_000, "the turn", agent.prompt(sessionId, "go"));
  assert.deepEqual(
    questions(agent).map((q) => q.toolCall.title.replace(/ \(protected path: .*\)$/, "")),
    ["Write vendor/lib/.git/config", "Write .GIT/config", "Write .git/hooks/pre-push", "Write vendor/store/hooks/pre-push", "Write .claude/settings.json"],
  );
  // Only the ordinary file reached the editor.
  assert.deepEqual(
    editor.calls.filter((c) => c.method === "fs/write_text_file").map((c) => c.params.path),
    [join(workdir, ".envrc.example")],
  );
});

test("a subagent with allowEdits meets the same gate: its write to .git/config asks", async (t) => {
  const { agent, model, workdir } = await world(t);
  gitRepo(workdir);
  model.enqueue(
    { toolCalls: [{ name: "task", arguments: { prompt: "Set the hook", allowEdits: true } }] },
    write(".git/config", "[core]\n\tfsmonitor = evil\n"),
    { content: ["I could not write it."] },
    { content: ["ok"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = option("reject_once");
  await within(15_000, "the turn", agent.prompt(sessionId, "go"));
  const asked = questions(agent);
  assert.equal(asked.length, 1);
  assert.match(asked[0].toolCall.title, /^Subagent: Write \.git\/config \(protected path: /);
  assert.equal(readFileSync(join(workdir, ".git", "config"), "utf8"), GIT_CONFIG);
});

test("a folder swapped for a link while the question waits: the write is refused, nothing lands outside", async (t) => {
  const { agent, model, workdir } = await world(t);
  const outside = `${workdir}-outside`;
  mkdirSync(outside);
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  mkdirSync(join(workdir, "sub"));
  model.enqueue(write("sub/x.txt", "x\n"), { content: ["done"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  agent.onPermission = (params) => {
    // The gate judged workdir/sub/x.txt; now sub leads outside.
    renameSync(join(workdir, "sub"), join(workdir, "parked"));
    symlinkSync(outside, join(workdir, "sub"));
    return option("allow_once")(params);
  };
  await within(15_000, "the turn", agent.prompt(sessionId, "go"));
  assert.equal(existsSync(join(outside, "x.txt")), false);
  assert.equal(existsSync(join(workdir, "parked", "x.txt")), false);
  assert.match(model.requests[1]!.body.messages.at(-1).content, /not the path this call was checked for .*nothing was written/);
});
