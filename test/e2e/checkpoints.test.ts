import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeEditor } from "../support/editor.js";
import { stopDaemon } from "../support/harness.js";
import type { Agent } from "../support/harness.js";
import { world, within } from "./fixture.js";

/** The text of the last local command answer a window got. */
const lastAnswer = (agent: Agent, sessionId: string): string =>
  agent
    .updatesFor(sessionId)
    .filter((u) => u._meta?.["reasonix.io"]?.kind === "command")
    .at(-1)?.content.text ?? "";

test("/undo after a turn that wrote two files and edited a CRLF file removes the two and restores the third's exact bytes, without the model; checkpoints survive a restart; then nothing to undo", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t);
  const crlf = Buffer.from("first line\r\nsecond line\r\nlast line, no newline", "utf8");
  writeFileSync(join(workdir, "c.txt"), crlf);
  model.enqueue(
    {
      toolCalls: [
        { id: "w1", name: "write_file", arguments: { path: "a.txt", content: "new file a\n" } },
        { id: "w2", name: "write_file", arguments: { path: "sub/b.txt", content: "new file b\n" } },
        { id: "e1", name: "edit_file", arguments: { path: "c.txt", edits: [{ oldText: "second line", newText: "SECOND LINE" }] } },
      ],
    },
    { content: ["changed three files"] },
    { toolCalls: [{ id: "w3", name: "write_file", arguments: { path: "a.txt", content: "a, second version\n" } }] },
    { content: ["changed a again"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await within(10_000, "turn 1", agent.prompt(sessionId, "make the changes"))).stopReason, "end_turn");
  assert.equal(readFileSync(join(workdir, "c.txt"), "utf8"), "first line\r\nSECOND LINE\r\nlast line, no newline");
  assert.match(agent.textOf(sessionId), /\[checkpoint 1\] Saved the prior state of 3 files this turn changed \(a\.txt, sub\/b\.txt, c\.txt\)/);
  assert.equal((await within(10_000, "turn 2", agent.prompt(sessionId, "change a again"))).stopReason, "end_turn");
  assert.equal(readFileSync(join(workdir, "a.txt"), "utf8"), "a, second version\n");

  // The daemon restarts; the checkpoints are in the store and in the replay.
  await agent.closeStdin();
  await stopDaemon(home.dir);
  const next = spawn();
  await next.initialize();
  await next.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] });
  const replayed = next.updatesFor(sessionId).filter((u) => u._meta?.["reasonix.io"]?.kind === "checkpoint");
  assert.deepEqual(
    replayed.map((u) => u.content.text.match(/\[checkpoint \d+\]/)![0]),
    ["[checkpoint 1]", "[checkpoint 2]"],
  );
  const requests = model.requests.length;

  await next.prompt(sessionId, "/checkpoints");
  assert.match(lastAnswer(next, sessionId), /- 1 — .* — a\.txt \(new\), sub\/b\.txt \(new\), c\.txt\n- 2 — .* — a\.txt$/);

  // The newest turn first: a.txt back to what turn 1 wrote.
  assert.equal((await next.prompt(sessionId, "/undo")).stopReason, "end_turn");
  assert.match(lastAnswer(next, sessionId), /Undid checkpoint 2/);
  assert.equal(readFileSync(join(workdir, "a.txt"), "utf8"), "new file a\n");

  // Then turn 1: the two new files gone, the CRLF file byte for byte as it was.
  await next.prompt(sessionId, "/undo");
  assert.match(
    lastAnswer(next, sessionId),
    /Undid checkpoint 1[\s\S]*Removed \(created by that turn\): a\.txt, sub\/b\.txt[\s\S]*Restored to their earlier content: c\.txt/,
  );
  assert.equal(existsSync(join(workdir, "a.txt")), false);
  assert.equal(existsSync(join(workdir, "sub")), false, "the folder the turn created for b.txt goes too");
  assert.deepEqual(readFileSync(join(workdir, "c.txt")), crlf);

  await next.prompt(sessionId, "/undo");
  assert.match(lastAnswer(next, sessionId), /^Nothing to undo/);

  // /redo re-applies the last undo (turn 1's changes), and it can be undone again.
  await next.prompt(sessionId, "/redo");
  assert.match(lastAnswer(next, sessionId), /Redid checkpoint 1/);
  assert.equal(readFileSync(join(workdir, "a.txt"), "utf8"), "new file a\n");
  assert.equal(readFileSync(join(workdir, "c.txt"), "utf8"), "first line\r\nSECOND LINE\r\nlast line, no newline");
  await next.prompt(sessionId, "/undo");
  assert.deepEqual(readFileSync(join(workdir, "c.txt")), crlf);
  assert.equal(existsSync(join(workdir, "a.txt")), false);

  // None of it asked the model.
  assert.equal(model.requests.length, requests);
});

test("/undo goes through the editor's buffers when it offers fs, and brings back what the buffer held (unsaved text included)", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false } });
  const buffers = new Map<string, string>();
  agent.onClientRequest = (method, params) => {
    if (method === "fs/read_text_file") return { content: buffers.get(params.path) ?? readFileSync(params.path, "utf8") };
    if (method === "fs/write_text_file") {
      buffers.set(params.path, params.content);
      writeFileSync(params.path, params.content);
      return {};
    }
    throw new Error(`unexpected ${method}`);
  };
  writeFileSync(join(workdir, "c.txt"), "one\r\ntwo");
  // Unsaved in the editor: what the turn edits, and what undo must bring back.
  buffers.set(join(workdir, "c.txt"), "one\r\ntwo, unsaved");
  model.enqueue({ toolCalls: [{ name: "edit_file", arguments: { path: "c.txt", edits: [{ oldText: "two", newText: "TWO" }] } }] }, { content: ["done"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "edit");
  assert.equal(buffers.get(join(workdir, "c.txt")), "one\r\nTWO, unsaved");
  await agent.prompt(sessionId, "/undo");
  assert.equal(buffers.get(join(workdir, "c.txt")), "one\r\ntwo, unsaved");
  const writes = agent.agentRequests.filter((r) => r.method === "fs/write_text_file");
  assert.equal(writes.length, 2);
  assert.equal(writes[1]!.params.content, "one\r\ntwo, unsaved");
});

const FS = { fs: { readTextFile: true, writeTextFile: true }, terminal: false };

test("a write the editor refused leaves no checkpoint entry, and /undo after the user changed that file leaves the user's content", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS });
  const editor = new FakeEditor();
  editor.attach(agent);
  const hello = join(workdir, "hello.txt");
  writeFileSync(hello, "hello\n");
  model.enqueue(
    { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "a from turn 1\n" } }] },
    { content: ["wrote a"] },
    { toolCalls: [{ name: "write_file", arguments: { path: "hello.txt", content: "hello from the model\n" } }] },
    { content: ["tried hello"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "write a");
  assert.match(agent.textOf(sessionId), /\[checkpoint 1\] Saved the prior state of 1 file this turn changed \(a\.txt\)/);
  editor.faults.set("fs/write_text_file", "fail");
  await agent.prompt(sessionId, "write hello");
  assert.equal(editor.buffers.get(hello), undefined, "the editor took nothing");
  const checkpointLines = agent.updatesFor(sessionId).filter((u) => u._meta?.["reasonix.io"]?.kind === "checkpoint");
  assert.deepEqual(
    checkpointLines.map((u) => u.content.text.match(/\[checkpoint \d+\][^;]*/)![0]),
    ["[checkpoint 1] Saved the prior state of 1 file this turn changed (a.txt)"],
    "no [checkpoint N] names hello.txt",
  );
  await agent.prompt(sessionId, "/checkpoints");
  assert.match(lastAnswer(agent, sessionId), /^\*\*Checkpoints\*\* \(newest last\)\n- 1 — .* — a\.txt \(new\)$/);

  // The user edits hello.txt in the editor; /undo undoes turn 1 (a.txt) and leaves hello.txt alone.
  editor.faults.clear();
  editor.buffers.set(hello, "hello, the user's edit\n");
  await agent.prompt(sessionId, "/undo");
  assert.match(lastAnswer(agent, sessionId), /Undid checkpoint 1/);
  assert.doesNotMatch(lastAnswer(agent, sessionId), /hello/);
  assert.equal(editor.buffers.get(hello), "hello, the user's edit\n");
  assert.equal(readFileSync(hello, "utf8"), "hello\n");
  assert.equal(editor.calls.filter((c) => c.method === "fs/write_text_file" && c.params.path === hello).length, 1, "only the refused write ever aimed at it");
});

test("/undo refuses, naming it, a file the user changed since the turn and changes nothing; /undo --force restores; /redo likewise", async (t) => {
  const { agent, model, workdir } = await world(t, { clientCapabilities: FS });
  const editor = new FakeEditor();
  editor.attach(agent);
  const a = join(workdir, "a.txt");
  writeFileSync(a, "a as it was\n");
  model.enqueue({ toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "a from the turn\n" } }] }, { content: ["wrote a"] });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "write a");
  assert.equal(editor.buffers.get(a), "a from the turn\n");
  editor.buffers.set(a, "a from the turn\nand the user's line\n");

  await agent.prompt(sessionId, "/undo");
  assert.match(
    lastAnswer(agent, sessionId),
    /^\*\*Not undone\*\*: a\.txt changed since the turn of checkpoint 1 wrote it[\s\S]*Nothing was touched[\s\S]*`\/undo --force`/,
  );
  assert.equal(editor.buffers.get(a), "a from the turn\nand the user's line\n");
  await agent.prompt(sessionId, "/help");
  assert.match(lastAnswer(agent, sessionId), /`\/undo \[--force\]`/);

  await agent.prompt(sessionId, "/undo --force");
  assert.match(lastAnswer(agent, sessionId), /Undid checkpoint 1[\s\S]*Restored to their earlier content: a\.txt/);
  assert.equal(editor.buffers.get(a), "a as it was\n");

  // The user edits again after the undo: /redo refuses to clobber it, --force re-applies what the undo saved.
  editor.buffers.set(a, "a as it was, edited after the undo\n");
  await agent.prompt(sessionId, "/redo");
  assert.match(lastAnswer(agent, sessionId), /^\*\*Not redone\*\*: a\.txt changed since checkpoint 1 was undone[\s\S]*`\/redo --force`/);
  assert.equal(editor.buffers.get(a), "a as it was, edited after the undo\n");
  await agent.prompt(sessionId, "/redo --force");
  assert.match(lastAnswer(agent, sessionId), /Redid checkpoint 1/);
  assert.equal(editor.buffers.get(a), "a from the turn\nand the user's line\n");
});

test("a turn that wrote two files, one changed since: /undo is all or nothing, refusing and naming only the changed one; --force restores both", async (t) => {
  const { agent, model, workdir } = await world(t);
  writeFileSync(join(workdir, "a.txt"), "a0\n");
  model.enqueue(
    {
      toolCalls: [
        { id: "w1", name: "write_file", arguments: { path: "a.txt", content: "a1\n" } },
        { id: "w2", name: "write_file", arguments: { path: "b.txt", content: "b1\n" } },
      ],
    },
    { content: ["wrote both"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  await agent.prompt(sessionId, "write both");
  writeFileSync(join(workdir, "b.txt"), "b1\nthe user's b\n");
  await agent.prompt(sessionId, "/undo");
  const refusal = lastAnswer(agent, sessionId);
  assert.match(refusal, /^\*\*Not undone\*\*: b\.txt changed since/);
  assert.doesNotMatch(refusal, /a\.txt/);
  assert.equal(readFileSync(join(workdir, "a.txt"), "utf8"), "a1\n", "the unchanged file is not undone alone");
  assert.equal(readFileSync(join(workdir, "b.txt"), "utf8"), "b1\nthe user's b\n");
  await agent.prompt(sessionId, "/undo --force");
  assert.match(lastAnswer(agent, sessionId), /Removed \(created by that turn\): b\.txt[\s\S]*Restored to their earlier content: a\.txt/);
  assert.equal(readFileSync(join(workdir, "a.txt"), "utf8"), "a0\n");
  assert.equal(existsSync(join(workdir, "b.txt")), false);
});
