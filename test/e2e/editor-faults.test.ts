/**
 * An editor that answers wrongly, late or never (issue 16, item 4): permission answers naming no
 * offered option or of no known shape, a question nobody answers, `fs/*` and `terminal/*` requests
 * that fail, hang or answer garbage, responses to ids never sent. Each is a clear message for the
 * model or the user; the session takes the next prompt.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeEditor } from "../support/editor.js";
import { world } from "./fixture.js";

const FS_CAPS = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

/** The tool results the model read in its last request. */
const toolResults = (model: { requests: Array<{ body: any }> }): string[] =>
  model.requests
    .at(-1)!
    .body.messages.filter((m: { role: string }) => m.role === "tool")
    .map((m: { content: string }) => m.content);

test("permission answers that name no offered option or have no known shape count as rejected; the command never runs", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const answers: unknown[] = [
    { outcome: { outcome: "selected", optionId: "allow_everything_forever" } },
    { outcome: { outcome: "maybe" } },
    { outcome: "selected" },
    {},
    null,
    "yes",
    { outcome: { outcome: "selected", optionId: 7 } },
  ];
  for (const [i, answer] of answers.entries()) {
    agent.onPermission = () => answer;
    const file = join(workdir, `ran-${i}`);
    model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: `touch ${file}` } }] }, { content: ["noted"] });
    assert.equal((await agent.prompt(sessionId, `try ${i}`)).stopReason, "end_turn", JSON.stringify(answer));
    assert.equal(existsSync(file), false, `answer ${JSON.stringify(answer)} must not approve`);
    assert.match(toolResults(model).at(-1)!, /No answer to the permission request to run .*; it was not done\./);
  }
  agent.onPermission = (p: any) => ({ outcome: { outcome: "selected", optionId: p.options[0].optionId } });
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: `touch ${join(workdir, "ran-ok")}` } }] }, { content: ["done"] });
  assert.equal((await agent.prompt(sessionId, "now allowed")).stopReason, "end_turn");
  assert.equal(existsSync(join(workdir, "ran-ok")), true, "a well-formed answer still works");
});

test("a question the attached window never answers is withdrawn at permissionTimeoutSeconds and counts as rejected", async (t) => {
  const { agent, model, workdir } = await world(t, { env: { REASONIX_PERMISSION_TIMEOUT_SECONDS: "0.3" } });
  agent.onPermission = () => new Promise(() => undefined);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const file = join(workdir, "never");
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: `touch ${file}` } }] }, { content: ["gave up"] });
  assert.equal((await agent.prompt(sessionId, "ask me")).stopReason, "end_turn");
  assert.equal(existsSync(file), false);
  assert.match(toolResults(model).at(-1)!, /No answer to the permission request/);
  const withdrawn = agent.messages.filter((m: any) => m.method === "$/cancel_request");
  assert.equal(withdrawn.length, 1, "the editor is told the question is withdrawn");
  assert.equal((await agent.prompt(sessionId, "still there?")).stopReason, "end_turn");
});

test("fs requests that fail, hang or answer garbage: reads fall back to the disk, writes fail with the cause, the session goes on", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS_CAPS, env: { REASONIX_EDITOR_TIMEOUT_SECONDS: "0.3" } });
  const editor = new FakeEditor();
  editor.attach(agent);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const path = join(workdir, "notes.txt");
  writeFileSync(path, "from disk\n");
  for (const fault of ["fail", "hang", "garbage"] as const) {
    editor.faults.set("fs/read_text_file", fault);
    model.enqueue({ toolCalls: [{ name: "read_file", arguments: { path } }] }, { content: ["read"] });
    await agent.prompt(sessionId, `read (${fault})`);
    assert.match(toolResults(model).at(-1)!, /from disk/, `read with the editor's ${fault}`);
  }
  const expected = { fail: /the editor could not do fs\/write_text_file/, hang: /the editor did not answer fs\/write_text_file within 0\.3 s/ };
  for (const fault of ["fail", "hang"] as const) {
    editor.faults.set("fs/write_text_file", fault);
    model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: join(workdir, `new-${fault}.txt`), content: "x\n" } }] }, { content: ["tried"] });
    assert.equal((await agent.prompt(sessionId, `write (${fault})`)).stopReason, "end_turn");
    assert.match(toolResults(model).at(-1)!, expected[fault]);
    assert.equal(existsSync(join(workdir, `new-${fault}.txt`)), false, "a failed editor write never goes around the buffer to the disk");
  }
  editor.faults.clear();
  model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: join(workdir, "new-ok.txt"), content: "ok\n" } }] }, { content: ["written"] });
  assert.equal((await agent.prompt(sessionId, "write")).stopReason, "end_turn");
  assert.equal(editor.buffers.get(join(workdir, "new-ok.txt")), "ok\n");
  assert.equal(readFileSync(path, "utf8"), "from disk\n");
});

test("terminal requests that fail, hang or answer garbage: the command fails with a sentence naming the method, and every terminal made is released", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { terminal: true }, env: { REASONIX_EDITOR_TIMEOUT_SECONDS: "0.3" } });
  const editor = new FakeEditor();
  editor.attach(agent);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const cases: Array<[string, "fail" | "hang" | "garbage", RegExp]> = [
    ["terminal/create", "fail", /the editor could not do terminal\/create/],
    ["terminal/create", "hang", /the editor did not answer terminal\/create within 0\.3 s/],
    ["terminal/create", "garbage", /the editor's answer to terminal\/create is not a valid terminal\/create result \(terminalId: /],
    ["terminal/wait_for_exit", "fail", /the editor could not do terminal\/wait_for_exit/],
    ["terminal/wait_for_exit", "garbage", /the editor's answer to terminal\/wait_for_exit is not a valid terminal\/wait_for_exit result/],
    ["terminal/output", "fail", /the editor could not do terminal\/output/],
    ["terminal/output", "hang", /the editor did not answer terminal\/output within 0\.3 s/],
    ["terminal/output", "garbage", /the editor's answer to terminal\/output is not a valid terminal\/output result/],
  ];
  for (const [method, fault, re] of cases) {
    editor.faults.clear();
    editor.faults.set(method, fault);
    model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo hi" } }] }, { content: ["ok"] });
    assert.equal((await agent.prompt(sessionId, `${method} ${fault}`)).stopReason, "end_turn");
    assert.match(toolResults(model).at(-1)!, re, `${method} ${fault}`);
    const failed = agent
      .updatesFor(sessionId)
      .filter((u) => u.sessionUpdate === "tool_call_update")
      .at(-1);
    assert.equal(failed.status, "failed", `${method} ${fault}`);
  }
  // release was asked for every terminal created, even when the editor then misbehaved
  const created = editor.calls.filter((c) => c.method === "terminal/create").length;
  const released = editor.calls.filter((c) => c.method === "terminal/release").length;
  assert.equal(released, created - 3, "the three create faults made no terminal");
  editor.faults.clear();
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo fine" } }] }, { content: ["ok"] });
  await agent.prompt(sessionId, "works again");
  assert.match(toolResults(model).at(-1)!, /fine/);
  assert.equal(editor.liveTerminals, 0);
});

test("responses to ids the agent never sent are ignored; the session streams on", async (t) => {
  const { agent, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  for (const id of [0, 987654, -1, "made-up", 18446744073709551617n, null]) {
    const idText = typeof id === "bigint" ? id.toString() : JSON.stringify(id);
    agent.writeRaw(`{"jsonrpc":"2.0","id":${idText},"result":{"outcome":{"outcome":"selected","optionId":"allow_once"}}}\n`);
    agent.writeRaw(`{"jsonrpc":"2.0","id":${idText},"error":{"code":-32603,"message":"no"}}\n`);
  }
  agent.writeRaw('{"jsonrpc":"2.0","id":5,"result":}\n');
  model.enqueue({ content: ["still ", "here"] });
  assert.equal((await agent.prompt(sessionId, "hello")).stopReason, "end_turn");
  assert.equal(agent.textOf(sessionId), "still here");
});
