import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stopDaemon } from "../support/harness.js";
import { world, test } from "./fixture.js";

const select = (optionId: string) => () => ({ outcome: { outcome: "selected", optionId } });

test("a scripted write inside cwd lands on disk, reported pending → in_progress → completed with a diff", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "src/hello.txt", content: "hello\nworld\n" } }] }, { content: ["done"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "write hello")).stopReason, "end_turn");
  assert.equal(readFileSync(join(workdir, "src/hello.txt"), "utf8"), "hello\nworld\n");
  assert.deepEqual(
    agent.agentRequests.filter((r) => r.method === "session/request_permission"),
    [],
  );

  const calls = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
  assert.deepEqual(
    calls.map((u) => u.status),
    ["pending", "in_progress", "completed"],
  );
  const first = calls[0];
  assert.equal(first.kind, "edit");
  assert.equal(first.locations[0].path, join(workdir, "src/hello.txt"));
  assert.deepEqual(first.rawInput, { path: "src/hello.txt", content: "hello\nworld\n" });
  assert.ok(calls.every((c) => c.toolCallId === first.toolCallId));
  const diff = calls[2].content.find((c: { type: string }) => c.type === "diff");
  assert.equal(diff.path, join(workdir, "src/hello.txt"));
  assert.equal(diff.newText, "hello\nworld\n");
  assert.ok(diff.oldText === null || diff.oldText === undefined);

  // The tool result went back to the model as a tool message.
  const second = model.requests[1]!.body.messages;
  assert.equal(second.at(-1).role, "tool");
  assert.equal(second.at(-1).tool_call_id, "w1");
  assert.equal(second.at(-2).tool_calls[0].function.name, "write_file");
});

test("run_command asks; reject means it never ran; allow_always covers the identical second command", async (t) => {
  const { agent, model, workdir } = await world(t);
  const cmd = "touch ran.marker && echo did-it";
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: cmd } }] }, { content: ["refused, ok"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = select("reject_once");
  await agent.prompt(sessionId, "run it");
  assert.equal(existsSync(join(workdir, "ran.marker")), false);
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission");
  assert.equal(asked.length, 1);
  assert.deepEqual(
    asked[0]!.params.options.map((o: { kind: string }) => o.kind),
    ["allow_once", "allow_always", "reject_once", "reject_always"],
  );
  assert.equal(asked[0]!.params.toolCall.kind, "execute");
  const failed = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .at(-1);
  assert.equal(failed.status, "failed");
  assert.match(model.requests[1]!.body.messages.at(-1).content, /rejected/);

  model.enqueue(
    { toolCalls: [{ name: "run_command", arguments: { command: cmd } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: cmd } }] },
    { content: ["ran twice"] },
  );
  agent.onPermission = select("allow_always");
  await agent.prompt(sessionId, "run it twice");
  assert.equal(existsSync(join(workdir, "ran.marker")), true);
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 2);
  assert.match(model.requests.at(-1)!.body.messages.at(-1).content, /did-it/);
});

test("read-only asks before a write and a rejection leaves the disk alone; danger-full-access never asks", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "keep.txt"), "original\n");
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const set = await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  assert.equal(set.configOptions.find((o: { id: string }) => o.id === "tool_approval").currentValue, "read-only");

  model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: "keep.txt", content: "changed\n" } }] }, { content: ["ok"] });
  agent.onPermission = select("reject_once");
  await agent.prompt(sessionId, "change it");
  assert.equal(readFileSync(join(workdir, "keep.txt"), "utf8"), "original\n");
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 1);

  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "danger-full-access" });
  const outside = join(dirname(workdir), `${workdir.split("/").at(-1)}-full.txt`);
  t.after(() => rmSync(outside, { force: true }));
  model.enqueue(
    { toolCalls: [{ name: "write_file", arguments: { path: outside, content: "x" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "echo free > free.txt" } }] },
    { content: ["done"] },
  );
  agent.onPermission = () => {
    throw new Error("nothing may ask under danger-full-access");
  };
  await agent.prompt(sessionId, "do both");
  assert.equal(readFileSync(join(workdir, "free.txt"), "utf8"), "free\n");
  assert.equal(readFileSync(outside, "utf8"), "x");
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 1);
});

test("writes to ../outside, an absolute path outside and through a symlink outside all ask, and rejection means no write", async (t) => {
  const { agent, model, workdir } = await world(t);
  const outside = `${workdir}-outside`;
  mkdirSync(outside, { recursive: true });
  t.after(() => import("node:fs").then((fs) => fs.rmSync(outside, { recursive: true, force: true })));
  symlinkSync(outside, join(workdir, "link"));
  const name = outside.split("/").at(-1)!;
  model.enqueue(
    { toolCalls: [{ name: "write_file", arguments: { path: `../${name}/a.txt`, content: "a" } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: join(outside, "b.txt"), content: "b" } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: "link/c.txt", content: "c" } }] },
    { toolCalls: [{ name: "edit_file", arguments: { path: "link/c.txt", edits: [{ oldText: "c", newText: "d" }] } }] },
    { content: ["all refused"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = select("reject_once");
  await agent.prompt(sessionId, "escape");
  for (const f of ["a.txt", "b.txt", "c.txt"]) assert.equal(existsSync(join(outside, f)), false, f);
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 4);

  // An explicit allow is the only way out.
  model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: "link/c.txt", content: "c" } }] }, { content: ["ok"] });
  agent.onPermission = select("allow_once");
  await agent.prompt(sessionId, "now allowed");
  assert.equal(readFileSync(join(outside, "c.txt"), "utf8"), "c");
});

test("the tool list is fixed and ordered for the session; every request carries the same one", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ toolCalls: [{ name: "list_directory", arguments: {} }] }, { content: ["a"] }, { content: ["b"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "one");
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  await agent.prompt(sessionId, "two");
  const names = model.requests[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name);
  assert.deepEqual(names, [
    "read_file",
    "list_directory",
    "glob",
    "grep",
    "write_file",
    "edit_file",
    "run_command",
    "todo_write",
    "ask_user",
    "exit_plan_mode",
    "update_goal",
    "multi_edit",
    "web_fetch",
    "command_output",
    "command_wait",
    "command_kill",
    "task",
    "skill",
  ]);
  for (const r of model.requests) assert.deepEqual(r.body.tools, model.requests[0]!.body.tools);
});

test("a question dismissed by the editor is a refusal the model reads; session/cancel answers a pending question as cancelled", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "touch one.marker" } }] }, { content: ["understood"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = () => ({ outcome: { outcome: "cancelled" } });
  assert.equal((await agent.prompt(sessionId, "try")).stopReason, "end_turn");
  assert.equal(existsSync(join(workdir, "one.marker")), false);
  assert.match(model.requests[1]!.body.messages.at(-1).content, /not done|rejected/);

  // Now a question nobody answers, cancelled by the user through session/cancel.
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "touch two.marker" } }] }, { content: ["never"] });
  let release!: () => void;
  agent.onPermission = () => new Promise((resolve) => (release = () => resolve({ outcome: { outcome: "cancelled" } })));
  const from = agent.agentRequests.length;
  const pending = agent.prompt(sessionId, "try again");
  await agent.waitForAgentRequest((r) => r.method === "session/request_permission", undefined, from);
  await agent.cancel(sessionId);
  assert.equal((await pending).stopReason, "cancelled");
  release();
  assert.equal(existsSync(join(workdir, "two.marker")), false);
  const last = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .at(-1);
  assert.equal(last.status, "failed");
});

const command = (cmd: string) => ({ toolCalls: [{ name: "run_command", arguments: { command: cmd } }] });
const questions = (agent: { agentRequests: Array<{ method: string; params: any }> }) =>
  agent.agentRequests.filter((r) => r.method === "session/request_permission").map((r) => r.params);
const alwaysName = (q: { options: Array<{ kind: string; name: string }> }) => q.options.find((o) => o.kind === "allow_always")!.name;

test("an always-grant covers exactly what its option named: a destructive command only itself, a prefix only its words, a compound command every part", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "a.log"), "log\n");
  mkdirSync(join(workdir, "dir"));
  writeFileSync(join(workdir, "dir", "keep.txt"), "keep\n");
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const lastToolResult = () => model.requests.at(-1)!.body.messages.at(-1).content as string;

  // rm is destructive: "always" names, and grants, that exact command.
  agent.onPermission = select("allow_always");
  model.enqueue(command("rm -f a.log"), { content: ["removed"] });
  await agent.prompt(sessionId, "remove the log");
  assert.equal(questions(agent).length, 1);
  assert.equal(alwaysName(questions(agent)[0]!), "Always allow `rm -f a.log` in this session");
  assert.equal(existsSync(join(workdir, "a.log")), false);

  agent.onPermission = select("reject_once");
  model.enqueue(command("rm -rf dir"), { content: ["kept"] });
  await agent.prompt(sessionId, "remove dir");
  assert.equal(questions(agent).length, 2, "rm -rf dir asks");
  assert.equal(readFileSync(join(workdir, "dir", "keep.txt"), "utf8"), "keep\n");

  // echo hi is granted by the prefix its option shows.
  agent.onPermission = select("allow_always");
  model.enqueue(command("echo hi"), { content: ["said hi"] });
  await agent.prompt(sessionId, "say hi");
  assert.equal(questions(agent).length, 3);
  assert.equal(alwaysName(questions(agent)[2]!), "Always allow `echo hi …` in this session");

  // Joined to an ungranted command it asks, and rejected, nothing of it runs.
  agent.onPermission = select("reject_once");
  model.enqueue(command("echo hi && touch marker"), { content: ["not touched"] });
  await agent.prompt(sessionId, "say hi and touch");
  assert.equal(questions(agent).length, 4);
  assert.equal(existsSync(join(workdir, "marker")), false);

  // On its own it asks nothing and runs.
  agent.onPermission = () => {
    throw new Error("echo hi is granted");
  };
  model.enqueue(command("echo hi"), { content: ["said hi again"] });
  await agent.prompt(sessionId, "say hi again");
  assert.equal(questions(agent).length, 4);
  assert.match(lastToolResult(), /Exit code: 0\nOutput:\nhi/);

  // An option before the subcommand means no prefix: git --version covers only itself.
  agent.onPermission = select("allow_always");
  model.enqueue(command("git --version"), { content: ["a version"] });
  await agent.prompt(sessionId, "git version?");
  assert.equal(alwaysName(questions(agent)[4]!), "Always allow `git --version` in this session");
  agent.onPermission = select("reject_once");
  model.enqueue(command("git -c core.sshCommand=x push --force"), { content: ["not pushed"] });
  await agent.prompt(sessionId, "push");
  assert.equal(questions(agent).length, 6, "git -c … push asks");
  assert.match(lastToolResult(), /rejected/);

  // /status and the status object list what each grant covers.
  await agent.prompt(sessionId, "/status");
  const text = agent.textOf(sessionId);
  assert.match(text, /allow `rm -f a\.log` exactly \(run_command\)/);
  assert.match(text, /allow `echo hi …` \(run_command\)/);
  assert.match(text, /allow `git --version` exactly \(run_command\)/);
  const status = await agent.rpc.request("_reasonix.io/session/status", { sessionId });
  assert.deepEqual(status.grants, [
    { decision: "allow", tool: "run_command", match: "exact", covers: "rm -f a.log" },
    { decision: "allow", tool: "run_command", match: "prefix", covers: "echo hi …" },
    { decision: "allow", tool: "run_command", match: "exact", covers: "git --version" },
  ]);
});

test("grants belong to one session and are never stored: another session asks, and so does the same one after a daemon restart", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = select("allow_always");
  model.enqueue(command("echo hi"), command("echo hi"), { content: ["twice"] });
  await agent.prompt(sessionId, "say hi twice");
  assert.equal(questions(agent).length, 1);

  const other = (await agent.newSession(workdir)).sessionId;
  agent.onPermission = select("allow_once");
  model.enqueue(command("echo hi"), { content: ["once"] });
  await agent.prompt(other, "say hi");
  assert.equal(questions(agent).length, 2);
  assert.equal(questions(agent)[1]!.sessionId, other);
  assert.deepEqual((await agent.rpc.request("_reasonix.io/session/status", { sessionId: other })).grants, []);

  await agent.closeStdin();
  await stopDaemon(home.dir);
  const next = spawn();
  await next.initialize();
  await next.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  assert.deepEqual((await next.rpc.request("_reasonix.io/session/status", { sessionId })).grants, []);
  model.enqueue(command("echo hi"), { content: ["asked again"] });
  await next.prompt(sessionId, "say hi after the restart");
  assert.equal(questions(next).length, 1);
});
