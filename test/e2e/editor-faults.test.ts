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
import { setTimeout as sleep } from "node:timers/promises";
import { daemonStatus, world, within } from "./fixture.js";

/** Polls until `probe` gives a value. */
async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await sleep(50);
  }
}

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
  // The bound also covers the answers the editor does give: 1 s leaves room for a loaded machine.
  const { agent, model, workdir, window } = await world(t, { clientCapabilities: FS_CAPS, env: { REASONIX_EDITOR_TIMEOUT_SECONDS: "1" } });
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
  const write = async (w: typeof agent, name: string): Promise<string> => {
    model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: join(workdir, name), content: `${name}\n` } }] }, { content: ["tried"] });
    assert.equal((await w.prompt(sessionId, `write ${name}`)).stopReason, "end_turn");
    return toolResults(model).at(-1)!;
  };
  await write(agent, "new-ok.txt");
  assert.equal(editor.buffers.get(join(workdir, "new-ok.txt")), "new-ok.txt\n");
  const expected = { fail: /the editor could not do fs\/write_text_file/, hang: /the editor did not answer fs\/write_text_file within 1 s/ };
  for (const fault of ["fail", "hang"] as const) {
    editor.faults.set("fs/write_text_file", fault);
    assert.match(await write(agent, `new-${fault}.txt`), expected[fault]);
    assert.equal(existsSync(join(workdir, `new-${fault}.txt`)), false, "a failed editor write never goes around the buffer to the disk");
  }
  // That window took a write before, which may still sit unsaved in its buffer: while it is marked
  // silent, a write fails at once, to neither the editor nor the disk.
  editor.faults.clear();
  assert.match(await write(agent, "after-hang.txt"), /did not answer fs\/write_text_file lately.*Not written to the disk either/);
  assert.equal(editor.calls.filter((c) => c.params.path === join(workdir, "after-hang.txt")).length, 0, "not asked");
  assert.equal(existsSync(join(workdir, "after-hang.txt")), false);

  // A window that never took a write and let one time out: its next writes go to the disk, as for a window without fs.
  const other = await window(sessionId);
  editor.attach(other);
  editor.faults.set("fs/write_text_file", "hang");
  assert.match(await write(other, "other-hang.txt"), expected.hang);
  assert.match(await write(other, "other-next.txt"), /^Created other-next\.txt/);
  assert.equal(readFileSync(join(workdir, "other-next.txt"), "utf8"), "other-next.txt\n");
  assert.equal(editor.buffers.has(join(workdir, "other-next.txt")), false);
  assert.equal(readFileSync(path, "utf8"), "from disk\n");
});

test("a window that let fs/read_text_file time out: the first read falls back to the disk at the bound, with one warning in the log; the next does not wait", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS_CAPS, env: { REASONIX_EDITOR_TIMEOUT_SECONDS: "2" } });
  const editor = new FakeEditor();
  editor.attach(agent);
  editor.faults.set("fs/read_text_file", "hang");
  const path = join(workdir, "notes.txt");
  writeFileSync(path, "the file's content\n");
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  /** How long the read took, from its tool_call to its completion, as the window saw it. */
  const timedRead = async (id: string): Promise<number> => {
    model.enqueue({ toolCalls: [{ name: "read_file", arguments: { path } }] }, { content: ["read"] });
    const from = agent.updates.length;
    const turn = agent.prompt(sessionId, `read ${id}`);
    const call = await agent.waitForUpdate((u) => u.update.sessionUpdate === "tool_call", 10_000, from);
    const started = performance.now();
    await agent.waitForUpdate(
      (u) => u.update.toolCallId === call.update.toolCallId && u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed",
      10_000,
      from,
    );
    const took = performance.now() - started;
    assert.equal((await turn).stopReason, "end_turn");
    assert.match(toolResults(model).at(-1)!, /the file's content/, `${id} gave the model the file`);
    return took;
  };
  const first = await timedRead("r1");
  assert.ok(first >= 1900, `the first read waited for the editor (${Math.round(first)} ms)`);
  const warning = await within(
    5_000,
    "the warning in the daemon log",
    waitFor(() => agent.daemonLog().match(/.*did not answer fs\/read_text_file within 2 s.*/)?.[0]),
  );
  const line = JSON.parse(warning);
  assert.equal(line.level, 40, "a warning");
  assert.equal(line.method, "fs/read_text_file");
  assert.equal(typeof line.connId, "string");
  assert.equal("env" in line, false);

  const second = await timedRead("r2");
  assert.ok(second < 1000, `the second read did not wait (${Math.round(second)} ms)`);
  assert.equal(editor.calls.filter((c) => c.method === "fs/read_text_file").length, 1, "the silent window was not asked again");
  assert.equal(agent.daemonLog().match(/did not answer fs\/read_text_file/g)?.length, 1, "one warning per timeout");
});

test("terminal requests that fail, hang or answer garbage: the command fails with a sentence naming the method, and every terminal made is released", async (t) => {
  // As above, 1 s: under load a terminal/create answered at once once took over 0.3 s to arrive.
  const { agent, model, workdir, window, home } = await world(t, { clientCapabilities: { terminal: true }, env: { REASONIX_EDITOR_TIMEOUT_SECONDS: "1" } });
  const editor = new FakeEditor();
  editor.attach(agent);
  await agent.initialize();
  const confined = (await daemonStatus(home.dir)).sandbox.available as boolean;
  const { sessionId } = await agent.newSession(workdir);
  const cases: Array<[string, "fail" | "hang" | "garbage", RegExp]> = [
    ["terminal/create", "fail", /the editor could not do terminal\/create/],
    ["terminal/create", "hang", /the editor did not answer terminal\/create within 1 s/],
    ["terminal/create", "garbage", /the editor's answer to terminal\/create is not a valid terminal\/create result \(terminalId: /],
    ["terminal/wait_for_exit", "fail", /the editor could not do terminal\/wait_for_exit/],
    ["terminal/wait_for_exit", "garbage", /the editor's answer to terminal\/wait_for_exit is not a valid terminal\/wait_for_exit result/],
    ["terminal/output", "fail", /the editor could not do terminal\/output/],
    ["terminal/output", "hang", /the editor did not answer terminal\/output within 1 s/],
    ["terminal/output", "garbage", /the editor's answer to terminal\/output is not a valid terminal\/output result/],
  ];
  const last = (w: typeof agent): any =>
    w
      .updatesFor(sessionId)
      .filter((u) => u.sessionUpdate === "tool_call_update")
      .at(-1);
  for (const [method, fault, re] of cases) {
    // A window that let a request time out is not asked again for a while: each hang gets a fresh one.
    const w = fault === "hang" ? await window(sessionId) : agent;
    editor.attach(w);
    editor.faults.clear();
    editor.faults.set(method, fault);
    model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo hi" } }] }, { content: ["ok"] });
    assert.equal((await w.prompt(sessionId, `${method} ${fault}`)).stopReason, "end_turn");
    assert.match(toolResults(model).at(-1)!, re, `${method} ${fault}`);
    assert.equal(last(w).status, "failed", `${method} ${fault}`);
    if (fault !== "hang") continue;
    // That window's next command runs here at once, in the session's sandbox, without asking it.
    const asked = editor.calls.length;
    model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: 'echo "here, not in the editor, as pid $$"' } }] }, { content: ["ok"] });
    assert.equal((await w.prompt(sessionId, `after ${method} ${fault}`)).stopReason, "end_turn");
    const pid = Number(
      toolResults(model)
        .at(-1)!
        .match(/here, not in the editor, as pid (\d+)/)?.[1],
    );
    // In the sandbox's own pid namespace the shell's pid is a small number.
    if (confined) assert.ok(pid > 0 && pid < 10, `ran in the session's sandbox (pid ${pid})`);
    assert.equal(last(w).status, "completed");
    assert.equal(editor.calls.length, asked, `after the ${method} timeout, the window was not asked`);
  }
  // release was asked for every terminal created, even when the editor then misbehaved
  const created = editor.calls.filter((c) => c.method === "terminal/create").length;
  const released = editor.calls.filter((c) => c.method === "terminal/release").length;
  assert.equal(released, created - 3, "the three create faults made no terminal");
  assert.equal(agent.daemonLog().match(/did not answer terminal\/(create|output) within 1 s/g)?.length, 2, "one warning per timeout");
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
