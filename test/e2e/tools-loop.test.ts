import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { world, test } from "./fixture.js";

test("todo_write sends the complete plan; ask_user's chosen answer reaches the model", async (t) => {
  const { agent, model, workdir } = await world(t);
  model.enqueue(
    {
      toolCalls: [
        {
          name: "todo_write",
          arguments: {
            todos: [
              { content: "Read the code", status: "completed", priority: "high" },
              { content: "Fix the bug", status: "in_progress" },
            ],
          },
        },
      ],
    },
    { toolCalls: [{ name: "ask_user", arguments: { question: "Which database?", choices: ["SQLite", "Postgres"] } }] },
    { content: ["Using Postgres."] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  agent.onPermission = (params) => {
    const pick = params.options.find((o: { name: string }) => o.name === "Postgres");
    return { outcome: { outcome: "selected", optionId: pick.optionId } };
  };
  await agent.prompt(sessionId, "plan and ask");
  const plan = agent.updatesFor(sessionId).find((u) => u.sessionUpdate === "plan");
  assert.deepEqual(plan.entries, [
    { content: "Read the code", status: "completed", priority: "high" },
    { content: "Fix the bug", status: "in_progress", priority: "medium" },
  ]);
  const question = agent.agentRequests.find((r) => r.method === "session/request_permission")!;
  assert.equal(question.params.toolCall.title, "Which database?");
  assert.deepEqual(
    question.params.options.map((o: { name: string }) => o.name),
    ["SQLite", "Postgres", "Dismiss"],
  );
  assert.match(model.requests[2]!.body.messages.at(-1).content, /Postgres/);
});

test("a model that calls tools forever ends with max_turn_requests after max_steps rounds, with a warning", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { REASONIX_MAX_STEPS: "4" } });
  model.respond = () => ({ toolCalls: [{ name: "list_directory", arguments: {} }] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const r = await agent.prompt(sessionId, "loop");
  assert.equal(r.stopReason, "max_turn_requests");
  assert.equal(model.requests.length, 4);
  assert.match(agent.textOf(sessionId), /\[warning\].*4 model rounds/);
});

test("edit failures (not found, ambiguous, binary) come back to the model as tool errors and the session goes on", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "a.txt"), "x = 1\nx = 1\n");
  writeFileSync(join(workdir, "bin.dat"), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
  model.enqueue(
    { toolCalls: [{ id: "nf", name: "edit_file", arguments: { path: "a.txt", edits: [{ oldText: "y = 2", newText: "y = 3" }] } }] },
    { toolCalls: [{ id: "amb", name: "edit_file", arguments: { path: "a.txt", edits: [{ oldText: "x = 1", newText: "x = 2" }] } }] },
    { toolCalls: [{ id: "bin", name: "edit_file", arguments: { path: "bin.dat", edits: [{ oldText: "P", newText: "Q" }] } }] },
    { toolCalls: [{ id: "bad", name: "edit_file", arguments: "{not json" }] },
    { content: ["giving up"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "edit")).stopReason, "end_turn");
  const toolMessages = model.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool");
  const byId = Object.fromEntries(toolMessages.map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]));
  assert.match(byId.nf, /not found/i);
  assert.match(byId.amb, /ambiguous|2 matches/i);
  assert.match(byId.bin, /binary/i);
  assert.match(byId.bad, /not valid JSON/i);
  assert.equal(readFileSync(join(workdir, "a.txt"), "utf8"), "x = 1\nx = 1\n");
  const statuses = agent.updatesFor(sessionId).filter((u) => u.status === "failed");
  assert.equal(statuses.length, 4);
  model.enqueue({ content: ["still here"] });
  assert.equal((await agent.prompt(sessionId, "again")).stopReason, "end_turn");
});
