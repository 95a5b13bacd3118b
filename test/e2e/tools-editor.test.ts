import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeEditor } from "../support/editor.js";
import { within, world } from "./fixture.js";

const FS_CAPS = { fs: { readTextFile: true, writeTextFile: true }, terminal: false };

test("with fs capabilities the model reads the editor's buffer and writes reach the editor, not the disk", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS_CAPS });
  const editor = new FakeEditor();
  editor.attach(agent);
  const file = join(workdir, "app.ts");
  writeFileSync(file, "const saved = 1;\n");
  editor.buffers.set(file, "const unsaved = 2;\n");
  model.enqueue(
    { toolCalls: [{ id: "r", name: "read_file", arguments: { path: "app.ts" } }] },
    { toolCalls: [{ id: "e", name: "edit_file", arguments: { path: "app.ts", edits: [{ oldText: "unsaved = 2", newText: "edited = 3" }] } }] },
    { toolCalls: [{ id: "w", name: "write_file", arguments: { path: "new.ts", content: "export {};\n" } }] },
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "edit app.ts")).stopReason, "end_turn");

  const afterRead = model.requests[1]!.body.messages.at(-1);
  assert.equal(afterRead.role, "tool");
  assert.match(afterRead.content, /const unsaved = 2;/);
  assert.doesNotMatch(afterRead.content, /saved = 1/);
  assert.equal(editor.buffers.get(file), "const edited = 3;\n");
  assert.equal(readFileSync(file, "utf8"), "const saved = 1;\n");
  assert.equal(editor.buffers.get(join(workdir, "new.ts")), "export {};\n");
  assert.equal(existsSync(join(workdir, "new.ts")), false);
  assert.ok(editor.calls.some((c) => c.method === "fs/read_text_file" && c.params.sessionId === sessionId));
});

test("a Latin-1 file edited by the agent keeps its bytes and encoding and never goes through the editor", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS_CAPS });
  const editor = new FakeEditor();
  editor.attach(agent);
  const file = join(workdir, "legacy.txt");
  writeFileSync(file, Buffer.from("caf\xe9 cr\xe8me\nprix: 5\n", "latin1"));
  model.enqueue(
    { toolCalls: [{ name: "edit_file", arguments: { path: "legacy.txt", edits: [{ oldText: "prix: 5", newText: "prix: 6" }] } }] },
    { content: ["ok"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "raise the price");
  assert.deepEqual(readFileSync(file), Buffer.from("caf\xe9 cr\xe8me\nprix: 6\n", "latin1"));
  assert.deepEqual(
    editor.calls.filter((c) => c.params?.path === file),
    [],
  );
});

test("with the terminal capability run_command goes create → wait → output → release, shown as a terminal", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { terminal: true } });
  const editor = new FakeEditor();
  editor.attach(agent);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "echo from-terminal" } }] }, { content: ["ok"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "run it");
  assert.deepEqual(
    editor.calls.map((c) => c.method),
    ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"],
  );
  assert.equal(editor.calls[0]!.params.cwd, workdir);
  const done = agent
    .updatesFor(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call_update")
    .at(-1);
  assert.equal(done.status, "completed");
  assert.deepEqual(done.content, [{ type: "terminal", terminalId: "term-0" }]);
  assert.match(model.requests[1]!.body.messages.at(-1).content, /from-terminal/);
  assert.equal(editor.liveTerminals, 0);
});

test("cancel during a long command in the editor's terminal kills it and releases it", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { terminal: true } });
  const editor = new FakeEditor();
  editor.attach(agent);
  model.enqueue({ toolCalls: [{ name: "run_command", arguments: { command: "sleep 30; touch late.marker" } }] }, { content: ["never"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const pending = agent.prompt(sessionId, "long one");
  await agent.waitForAgentRequest((r) => r.method === "terminal/wait_for_exit");
  await agent.cancel(sessionId);
  assert.equal((await pending).stopReason, "cancelled");
  const methods = editor.calls.map((c) => c.method);
  assert.ok(methods.includes("terminal/kill"), methods.join(","));
  assert.equal(methods.at(-1), "terminal/release");
  assert.equal(editor.liveTerminals, 0);
  const term = editor.terminal("term-0")!;
  // The kill is answered before this process has reaped the child; its exit follows (sleep 30 would not).
  await within(10_000, "the killed command's exit", term.exited);
  assert.equal(term.exit?.signal, "SIGKILL");
  assert.equal(existsSync(join(workdir, "late.marker")), false);
});

test("an edit of a file whose editor buffer changed since the model read it is refused as stale", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS_CAPS });
  const editor = new FakeEditor();
  editor.attach(agent);
  const file = join(workdir, "app.ts");
  writeFileSync(file, "const a = 1;\n");
  editor.buffers.set(file, "const a = 1;\n");
  model.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "app.ts" } }] }, { content: ["read"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "read app.ts");

  editor.buffers.set(file, "const a = 1;\nconst typing = true;\n");
  model.enqueue({ toolCalls: [{ name: "edit_file", arguments: { path: "app.ts", oldText: "a = 1", newText: "a = 2" } }] }, { content: ["stale"] });
  await agent.prompt(sessionId, "change a");
  assert.match(
    model.requests.at(-1)!.body.messages.at(-1).content,
    /app\.ts has changed since you last read it \(on disk or in the editor\)\. Read the file again/,
  );
  assert.equal(editor.buffers.get(file), "const a = 1;\nconst typing = true;\n", "the user's typing is kept");
  assert.ok(!editor.calls.some((c) => c.method === "fs/write_text_file"), "nothing written");
});
