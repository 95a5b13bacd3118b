import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { world, within, test } from "./fixture.js";
import { busyBound } from "../support/busy.js";

const textOfContent = (u: any): string => (u.content ?? []).map((c: any) => c.content?.text ?? "").join("\n");

test("a task subagent answers by reading files, with a fresh context and read-only tools; its progress shows in the parent's call; its steps count against the parent's limit", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { REASONIX_MAX_STEPS: "4" } });
  mkdirSync(join(workdir, "notes"));
  writeFileSync(join(workdir, "notes", "answer.txt"), "The magic number is 42.\n");
  const question = "What is the magic number in notes/answer.txt? Report it with its file and line.";
  model.enqueue(
    { content: ["Asking a subagent."], toolCalls: [{ id: "task1", name: "task", arguments: { prompt: question } }] },
    { toolCalls: [{ id: "read1", name: "read_file", arguments: { path: "notes/answer.txt" } }] },
    { content: ["The magic number is 42 (notes/answer.txt:1)."] },
    { toolCalls: [{ id: "ls1", name: "list_directory", arguments: {} }] },
    { toolCalls: [{ id: "ls2", name: "list_directory", arguments: {} }] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const r = await within(15_000, "the turn", agent.prompt(sessionId, "find the magic number"));

  // Child: its own history (a system prompt of its own and the question), only the read-only tools.
  const child = model.requests[1]!.body;
  assert.equal(child.messages.length, 2);
  assert.match(child.messages[0].content, /subagent/);
  assert.deepEqual(child.messages[1], { role: "user", content: question });
  assert.deepEqual(
    child.tools.map((x: any) => x.function.name),
    ["read_file", "list_directory", "glob", "grep"],
  );
  assert.match(model.requests[2]!.body.messages.at(-1).content, /The magic number is 42/);
  // Parent: the report is the task's result.
  const parentTool = model.requests[3]!.body.messages.find((m: any) => m.role === "tool" && m.tool_call_id === "task1");
  assert.equal(parentTool.content, "The magic number is 42 (notes/answer.txt:1).");
  assert.equal(model.requests[3]!.body.messages.filter((m: any) => m.role === "user").length, 1, "the parent's history never sees the child's");

  // Progress streamed into the parent's tool call; the child's calls are not calls of the session.
  const updates = agent.updatesFor(sessionId);
  const taskCall = updates.find((u) => u.sessionUpdate === "tool_call" && u.title.startsWith("Subagent:"));
  const mine = updates.filter((u) => u.toolCallId === taskCall.toolCallId && u.sessionUpdate === "tool_call_update");
  assert.ok(
    mine.some((u) => u.status === undefined && /- Read notes\/answer\.txt ✓/.test(textOfContent(u))),
    "a progress update names the child's read",
  );
  const final = mine.at(-1);
  assert.equal(final.status, "completed");
  assert.match(textOfContent(final), /- Read notes\/answer\.txt ✓[\s\S]*Subagent finished: end_turn, 2 steps\.[\s\S]*\*\*Report\*\*\nThe magic number is 42/);
  assert.deepEqual(final.rawOutput, { stopReason: "end_turn", steps: 2 });
  assert.deepEqual(
    updates.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.title.split(" ")[0]),
    ["Subagent:", "List"],
  );

  // Limit 4: parent round 1, two child rounds, parent round 2; a fifth round never happens.
  assert.equal(r.stopReason, "max_turn_requests");
  assert.equal(model.requests.length, 4);

  // The whole transcript is kept: /tasks lists it, /tasks 1 shows it, with what the read returned.
  await agent.prompt(sessionId, "/tasks");
  const answers = () => agent.updatesFor(sessionId).filter((u) => u._meta?.["reasonix.io"]?.kind === "command");
  assert.match(answers().at(-1).content.text, /- 1 — .* — end_turn, 2 steps — What is the magic number/);
  await agent.prompt(sessionId, "/tasks 1");
  assert.match(
    answers().at(-1).content.text,
    /\*\*user:\*\* What is the magic number[\s\S]*\*\*tool call\*\* `read_file`[\s\S]*\*\*result:\*\*\n[\s\S]*The magic number is 42\.[\s\S]*\*\*assistant:\*\* The magic number is 42 \(notes\/answer\.txt:1\)\./,
  );
  assert.equal(model.requests.length, 4, "viewing asks no model");
});

test("cancelling the parent turn stops its subagent mid-request", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "a.txt"), "alpha\n");
  model.enqueue(
    { toolCalls: [{ id: "task1", name: "task", arguments: { prompt: "Summarise a.txt" } }] },
    { toolCalls: [{ id: "read1", name: "read_file", arguments: { path: "a.txt" } }] },
    { content: ["Still think"], hang: true },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const turn = agent.prompt(sessionId, "summarise");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "tool_call_update" && /- Read a\.txt ✓/.test(textOfContent(u.update)));
  await model.waitForRequests(3);
  await agent.cancel(sessionId);
  assert.equal((await within(10_000, "the cancelled turn", turn)).stopReason, "cancelled");
  await model.waitForAborted(1);
  assert.equal(model.aborted, 1, "the child's streaming request was abandoned");
  assert.equal(model.requests.length, 3, "nothing ran after the cancel");
  const last = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .at(-1);
  assert.equal(last.status, "failed");
  // The session goes on.
  model.enqueue({ content: ["fine"] });
  assert.equal((await agent.prompt(sessionId, "again")).stopReason, "end_turn");
});

test("a subagent's read outside the workspace asks the parent's window, like the parent's own would; a refusal reaches the child", async (t) => {
  const { agent, model, workdir } = await world(t);
  const outside = mkdtempSync(join(tmpdir(), "rx-outside-"));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(join(outside, "secret.txt"), "not for you\n");
  model.enqueue(
    { toolCalls: [{ id: "task1", name: "task", arguments: { prompt: "Read the secret" } }] },
    { toolCalls: [{ id: "read1", name: "read_file", arguments: { path: join(outside, "secret.txt") } }] },
    { content: ["I was not allowed to read it."] },
    { content: ["done"] },
  );
  agent.onPermission = (params) => ({ outcome: { outcome: "selected", optionId: params.options.find((o: any) => o.kind === "reject_once").optionId } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await within(10_000, "the turn", agent.prompt(sessionId, "go"))).stopReason, "end_turn");
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission");
  assert.equal(asked.length, 1);
  assert.match(asked[0]!.params.toolCall.title, /^Subagent: Read .*secret\.txt/);
  const taskCall = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "tool_call");
  assert.equal(asked[0]!.params.toolCall.toolCallId, taskCall.toolCallId, "asked under the task call the editor knows");
  assert.match(model.requests[2]!.body.messages.at(-1).content, /rejected/);
  assert.equal(model.requests.length, 4);
});

test("a subagent is bounded in tokens and time (config.json subagent); the parent reads that it stopped early", async (t) => {
  // The first child must spend its tokens before its time: a starved round took longer than 0.5 s
  // under two suites' load, and stopped for time (the second child's check is about time).
  const seconds = busyBound(500) / 1000;
  const { agent, model, workdir } = await world(t, {
    prepare: (dir: string) => writeFileSync(join(dir, "config.json"), JSON.stringify({ subagent: { maxTokens: 50, seconds } })),
  });
  writeFileSync(join(workdir, "a.txt"), "alpha\n");
  model.enqueue(
    { toolCalls: [{ id: "t1", name: "task", arguments: { prompt: "Read a.txt" } }] },
    { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "a.txt" } }], usage: { prompt_tokens: 40, completion_tokens: 20 } },
    { toolCalls: [{ id: "t2", name: "task", arguments: { prompt: "Think hard" } }] },
    { content: ["Still think"], hang: true },
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await within(10_000 + seconds * 1000, "the turn", agent.prompt(sessionId, "go"))).stopReason, "end_turn");
  const results = Object.fromEntries(
    model.requests
      .at(-1)!
      .body.messages.filter((m: any) => m.role === "tool")
      .map((m: any) => [m.tool_call_id, m.content]),
  );
  // Over its tokens after one round: its read never ran.
  assert.match(results.t1, /^\(the subagent gave no report\)[\s\S]*stopped early \(token_limit\)/);
  assert.match(results.t2, /stopped early \(time_limit\)/);
  await model.waitForAborted(1);
  assert.equal(model.aborted, 1, "the timed-out child's request was abandoned");
});

test("with allowEdits a subagent may write, within the parent's permissions: read-only makes it ask; its changes join the turn's checkpoint", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue(
    { toolCalls: [{ id: "t1", name: "task", arguments: { prompt: "Create x.txt", allowEdits: true } }] },
    { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "x.txt", content: "from the child\n" } }] },
    { content: ["I could not write it."] },
    { content: ["ok"] },
    { toolCalls: [{ id: "t2", name: "task", arguments: { prompt: "Create y.txt", allowEdits: true } }] },
    { toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "y.txt", content: "from the child\n" } }] },
    { content: ["Wrote y.txt."] },
    { content: ["done"] },
  );
  agent.onPermission = (params) => ({ outcome: { outcome: "selected", optionId: params.options.find((o: any) => o.kind === "reject_once").optionId } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  await within(10_000, "the read-only turn", agent.prompt(sessionId, "one"));
  assert.deepEqual(
    model.requests[1]!.body.tools.map((x: any) => x.function.name),
    ["read_file", "list_directory", "glob", "grep", "write_file", "edit_file", "run_command", "multi_edit"],
  );
  const asked = agent.agentRequests.filter((r) => r.method === "session/request_permission");
  assert.equal(asked.length, 1, "read-only: the child's write asks, as the parent's would");
  assert.match(asked[0]!.params.toolCall.title, /^Subagent: Write x\.txt/);
  assert.equal(existsSync(join(workdir, "x.txt")), false);

  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "workspace-write" });
  await within(10_000, "the workspace-write turn", agent.prompt(sessionId, "two"));
  assert.equal(agent.agentRequests.filter((r) => r.method === "session/request_permission").length, 1, "no new question");
  assert.equal(readFileSync(join(workdir, "y.txt"), "utf8"), "from the child\n");
  assert.match(agent.textOf(sessionId), /\[checkpoint 1\] Saved the prior state of 1 file this turn changed \(y\.txt\)/);
  await agent.prompt(sessionId, "/undo");
  assert.equal(existsSync(join(workdir, "y.txt")), false);
});
