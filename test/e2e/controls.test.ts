import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stopDaemon } from "../support/harness.js";
import { world, test } from "./fixture.js";

const option = (list: Array<{ id: string }>, id: string) =>
  list.find((o) => o.id === id) as { id: string; currentValue: string; options: Array<{ value: string }>; category: string };

test("plan mode blocks a write until the user approves the plan; approval returns the session to normal", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const s = await agent.newSession(workdir);
  assert.deepEqual(
    s.modes.availableModes.map((m: { id: string }) => m.id),
    ["normal", "plan", "goal"],
  );
  assert.equal(option(s.configOptions, "mode").category, "mode");
  await agent.rpc.request("session/set_mode", { sessionId: s.sessionId, modeId: "plan" });
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "plan");

  model.enqueue(
    { toolCalls: [{ id: "early", name: "write_file", arguments: { path: "impl.txt", content: "too early" } }] },
    { toolCalls: [{ name: "exit_plan_mode", arguments: { plan: "1. write impl.txt", steps: ["Write impl.txt"] } }] },
    { toolCalls: [{ id: "late", name: "write_file", arguments: { path: "impl.txt", content: "implemented" } }] },
    { content: ["Done."] },
  );
  let fileAtApproval: boolean | undefined;
  agent.onPermission = (p) => {
    fileAtApproval = existsSync(join(workdir, "impl.txt"));
    assert.equal(p.toolCall.kind, "switch_mode");
    return { outcome: { outcome: "selected", optionId: p.options.find((o: { kind: string }) => o.kind === "allow_once").optionId } };
  };
  assert.equal((await agent.prompt(s.sessionId, "implement the feature")).stopReason, "end_turn");
  assert.equal(fileAtApproval, false, "the write before approval was blocked");
  assert.equal(readFileSync(join(workdir, "impl.txt"), "utf8"), "implemented");
  const updates = agent.updatesFor(s.sessionId);
  assert.ok(updates.some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "normal"));
  assert.ok(updates.some((u) => u.sessionUpdate === "plan" && u.entries[0].content === "Write impl.txt"));
  const messages = model.requests[1]!.body.messages;
  assert.match(messages.find((m: { role: string }) => m.role === "user").content, /Plan mode is on/);
  assert.match(messages.find((m: { tool_call_id?: string }) => m.tool_call_id === "early").content, /Plan mode/);
});

test("goal mode keeps working over several turns without a new prompt and stops when the model reports done", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "mode", value: "goal" });
  model.enqueue(
    { toolCalls: [{ name: "update_goal", arguments: { status: "continue", summary: "step 1" } }] },
    { content: ["Step 1 done."] },
    { toolCalls: [{ name: "update_goal", arguments: { status: "continue", summary: "step 2" } }] },
    { content: ["Step 2 done."] },
    { toolCalls: [{ name: "update_goal", arguments: { status: "complete", summary: "all three steps" } }] },
    { content: ["Finished."] },
  );
  assert.equal((await agent.prompt(sessionId, "Do the three-step job")).stopReason, "end_turn");
  assert.equal(model.requests.length, 6);
  const text = agent.textOf(sessionId);
  assert.match(text, /\[goal\] Continuing/);
  assert.match(text, /\[goal\] Complete: all three steps/);
  assert.match(model.requests[0]!.body.messages.at(-1).content, /Goal mode is on[\s\S]*Do the three-step job/);
  assert.match(model.requests[2]!.body.messages.at(-1).content, /Continue working toward the goal: Do the three-step job/);
  assert.equal(agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "user_message_chunk").length, 0);
  assert.ok(agent.updatesFor(sessionId).some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "normal"));
});

test("goal mode stops on cancel, and at its bound with a warning", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { REASONIX_GOAL_MAX_TURNS: "3" } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_mode", { sessionId, modeId: "goal" });
  model.respond = () => ({ content: ["working on it"] });
  assert.equal((await agent.prompt(sessionId, "never-ending goal")).stopReason, "end_turn");
  assert.equal(model.requests.length, 3);
  assert.match(agent.textOf(sessionId), /\[warning\] Goal paused after 3 turns/);

  await agent.rpc.request("session/set_mode", { sessionId, modeId: "goal" });
  let n = 0;
  model.respond = () => (++n === 2 ? { content: ["slow ", "turn"], hang: true } : { content: ["quick turn"] });
  const from = model.requests.length;
  const pending = agent.prompt(sessionId, "second goal");
  await model.waitForRequests(from + 2);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk" && u.update.content.text === "slow ");
  await agent.cancel(sessionId);
  assert.equal((await pending).stopReason, "cancelled");
  assert.equal(model.requests.length, from + 2, "no turn after the cancel");
  assert.match(agent.textOf(sessionId), /\[goal\] Stopped: cancelled/);
});

test("model and effort changes reach the next request and keep the history; unknown ids and values are -32602", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "first");
  assert.equal(model.requests[0]!.body.thinking, undefined);
  assert.equal(model.requests[0]!.body.reasoning_effort, undefined);

  const r = await agent.rpc.request("session/set_config_option", { sessionId, configId: "effort", value: "max" });
  assert.equal(option(r.configOptions, "effort").currentValue, "max");
  assert.equal(option(r.configOptions, "effort").category, "thought_level");
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "model", value: "deepseek/deepseek-v4-pro" });
  await agent.prompt(sessionId, "second");
  const second = model.requests[1]!.body;
  assert.equal(second.model, "deepseek-v4-pro");
  assert.deepEqual(second.thinking, { type: "enabled" });
  assert.equal(second.reasoning_effort, "max");
  assert.deepEqual(second.messages.slice(0, model.requests[0]!.body.messages.length), model.requests[0]!.body.messages);

  await agent.rpc.request("session/set_config_option", { sessionId, configId: "reasoning_effort", value: "off" });
  await agent.prompt(sessionId, "third");
  assert.deepEqual(model.requests[2]!.body.thinking, { type: "disabled" });
  assert.equal(model.requests[2]!.body.reasoning_effort, undefined);

  for (const [configId, value] of [
    ["nope", "x"],
    ["model", "no/such-model"],
    ["effort", "extreme"],
    ["tool_approval", "sometimes"],
    ["mode", "turbo"],
  ]) {
    const bad = await agent.rawRequest({ id: `bad-${configId}`, method: "session/set_config_option", params: { sessionId, configId, value } });
    assert.equal(bad.error?.code, -32602, `${configId}=${value}`);
  }
  const badMode = await agent.rawRequest({ id: "bad-mode", method: "session/set_mode", params: { sessionId, modeId: "turbo" } });
  assert.equal(badMode.error.code, -32602);
});

test("legacy selectors are a no-op with a deprecatedNotice and are never listed; legacy mode ids and set_model work", async (t) => {
  const { agent, workdir } = await world(t);
  await agent.initialize();
  const { sessionId, configOptions } = await agent.newSession(workdir);
  const ids = (list: Array<{ id: string }>) => list.map((o) => o.id);
  assert.deepEqual(ids(configOptions), ["mode", "model", "effort", "tool_approval"]);
  for (const configId of ["agent_preset", "work_mode", "profile", "runtime_profile", "token_mode"]) {
    const r = await agent.rawRequest({ id: configId, method: "session/set_config_option", params: { sessionId, configId, value: "delivery" } });
    assert.ok(r.result, configId);
    assert.match(r.result.deprecatedNotice, /retired/);
    assert.deepEqual(r.result.configOptions, configOptions, `${configId} changed nothing`);
    // Known legacy values only (reasonix.md §4): anything else is -32602, for every retired selector.
    const bad = await agent.rawRequest({ id: `${configId}-bad`, method: "session/set_config_option", params: { sessionId, configId, value: "nonsense" } });
    assert.equal(bad.error?.code, -32602, configId);
    assert.match(bad.error.message, /unknown .* value "nonsense"/);
  }
  const balanced = await agent.rawRequest({ id: "wm", method: "session/set_config_option", params: { sessionId, configId: "work_mode", value: "balanced" } });
  assert.match(balanced.result.deprecatedNotice, /retired/);
  const known = await agent.rawRequest({ id: "qf", method: "session/set_config_option", params: { sessionId, configId: "quality_floor", value: "balanced" } });
  assert.match(known.result.deprecatedNotice, /retired/);
  const unknown = await agent.rawRequest({ id: "qf2", method: "session/set_config_option", params: { sessionId, configId: "quality_floor", value: "ultra" } });
  assert.equal(unknown.error.code, -32602);

  await agent.rpc.request("session/set_mode", { sessionId, modeId: "default" });
  let list = (await agent.rpc.request("session/set_config_option", { sessionId, configId: "approval_mode", value: "ask" })).configOptions;
  assert.equal(option(list, "tool_approval").currentValue, "read-only");
  await agent.rpc.request("session/set_mode", { sessionId, modeId: "auto" });
  list = (await agent.rpc.request("session/set_config_option", { sessionId, configId: "mode", value: "normal" })).configOptions;
  assert.equal(option(list, "tool_approval").currentValue, "workspace-write");
  assert.equal(option(list, "mode").currentValue, "normal");
  assert.deepEqual(ids(list), ["mode", "model", "effort", "tool_approval"]);
  assert.deepEqual(await agent.rpc.request("session/set_model", { sessionId, modelId: "deepseek/deepseek-v4-pro" }), {});
  list = (await agent.rpc.request("session/set_config_option", { sessionId, configId: "models", value: "deepseek/deepseek-v4-pro" })).configOptions;
  assert.equal(option(list, "model").currentValue, "deepseek/deepseek-v4-pro");
});

test("custom commands from .reasonix/commands are listed with description and hint and expand to the model", async (t) => {
  const { agent, model, workdir } = await world(t);
  mkdirSync(join(workdir, ".reasonix", "commands", "git"), { recursive: true });
  writeFileSync(
    join(workdir, ".reasonix", "commands", "git", "commit.md"),
    "---\ndescription: Commit the staged work\nargument-hint: <message>\n---\nWrite a commit for: $ARGUMENTS (first word: $1)\n",
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const menu = await agent.waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update");
  const commit = menu.update.availableCommands.find((c: { name: string }) => c.name === "git:commit");
  assert.deepEqual(commit, { name: "git:commit", description: "Commit the staged work", input: { hint: "<message>" } });
  for (const name of ["help", "status", "model", "mcp", "sessions"])
    assert.ok(
      menu.update.availableCommands.some((c: { name: string }) => c.name === name),
      name,
    );

  await agent.prompt(sessionId, "/git:commit fix the parser");
  assert.equal(model.requests[0]!.body.messages.at(-1).content, "Write a commit for: fix the parser (first word: fix)");
  await agent.prompt(sessionId, "/unknown-thing please");
  assert.equal(model.requests[1]!.body.messages.at(-1).content, "/unknown-thing please");

  // A new command file shows up in a fresh available_commands_update at the next prompt.
  writeFileSync(join(workdir, ".reasonix", "commands", "review.md"), "---\ndescription: Review a file\n---\nReview $1\n");
  const from = agent.updates.length;
  await agent.prompt(sessionId, "/review src/a.ts");
  const again = await agent.waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update", undefined, from);
  assert.ok(again.update.availableCommands.some((c: { name: string }) => c.name === "review"));
  assert.equal(model.requests[2]!.body.messages.at(-1).content, "Review src/a.ts");
});

test("/help, /status and /model answer locally: no model request, the answer is recorded like any turn", async (t) => {
  const { agent, model, workdir, spawn } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "/help")).stopReason, "end_turn");
  assert.match(agent.textOf(sessionId), /\/status/);
  await agent.prompt(sessionId, "/status");
  const status = agent.textOf(sessionId);
  for (const what of [
    "Model: deepseek/deepseek-v4-flash",
    "Mode: normal",
    "Permissions: workspace-write",
    "Usage so far",
    "MCP servers: none",
    "Inbox: 0 queued",
  ])
    assert.ok(status.includes(what), what);
  await agent.prompt(sessionId, "/model deepseek/deepseek-v4-pro");
  assert.equal(model.requests.length, 0);
  model.enqueue({ content: ["pro answers"] });
  await agent.prompt(sessionId, "hello");
  assert.equal(model.requests[0]!.body.model, "deepseek-v4-pro");
  // The model never saw the local commands.
  assert.deepEqual(
    model.requests[0]!.body.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content),
    ["hello"],
  );

  const other = spawn();
  await other.initialize();
  const answer = await other.rawRequest({ id: "load", method: "session/load", params: { sessionId, cwd: workdir, mcpServers: [] } });
  assert.ok(answer.result);
  const replayed = other
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "user_message_chunk")
    .map((u) => u.content.text);
  assert.deepEqual(replayed, ["/help", "/status", "/model deepseek/deepseek-v4-pro", "hello"]);
});

test("after a daemon restart, load brings back mode, model, effort and permission preset", async (t) => {
  const { agent, workdir, home, spawn } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.rpc.request("session/set_mode", { sessionId, modeId: "plan" });
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "model", value: "deepseek/deepseek-v4-pro" });
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "effort", value: "low" });
  await agent.rpc.request("session/set_config_option", { sessionId, configId: "tool_approval", value: "read-only" });
  await agent.closeStdin();
  await stopDaemon(home.dir);

  const next = spawn();
  await next.initialize();
  const loaded = await next.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  assert.equal(loaded.modes.currentModeId, "plan");
  assert.equal(option(loaded.configOptions, "mode").currentValue, "plan");
  assert.equal(option(loaded.configOptions, "model").currentValue, "deepseek/deepseek-v4-pro");
  assert.equal(option(loaded.configOptions, "effort").currentValue, "low");
  assert.equal(option(loaded.configOptions, "tool_approval").currentValue, "read-only");
});
