/**
 * The user's umask for the user's files (DESIGN §6): the daemon keeps umask 077 for its own files,
 * but what a session's tools and commands create in the project follows the umask of the editor that
 * created the session, which the real shim reads from its own process and sends with the window.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { FakeEditor } from "../support/editor.js";
import { world, test } from "./fixture.js";

const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

test("with the editor's umask 022, files and folders made by write_file, a command and a background job are 0644 and 0755", async (t) => {
  const { agent, model, workdir } = await world(t, { umask: 0o022 });
  model.enqueue(
    { toolCalls: [{ name: "write_file", arguments: { path: "tool/made/new.txt", content: "from the tool\n" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "mkdir -p cmd/made && echo x > cmd/made/file" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "mkdir job && echo x > job/file", background: true } }] },
    { toolCalls: [{ name: "command_wait", arguments: { jobId: "job-1" } }] },
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "make some files")).stopReason, "end_turn");
  for (const dir of ["tool", "tool/made", "cmd", "cmd/made", "job"]) assert.equal(mode(join(workdir, dir)), "755", dir);
  for (const file of ["tool/made/new.txt", "cmd/made/file", "job/file"]) assert.equal(mode(join(workdir, file)), "644", file);
});

test("with the editor's umask 027 they are 0640 and 0750, in the editor's terminal too; an existing file keeps its mode", async (t) => {
  const { agent, model, workdir } = await world(t, { umask: 0o027, clientCapabilities: { terminal: true } });
  const editor = new FakeEditor();
  editor.attach(agent);
  model.enqueue(
    { toolCalls: [{ name: "write_file", arguments: { path: "tool/new.txt", content: "from the tool\n" } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: "tool/kept.txt", content: "from the tool\n" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "mkdir cmd && echo x > cmd/file && chmod 600 tool/kept.txt" } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: "tool/kept.txt", content: "again\n" } }] },
    { content: ["done"] },
  );
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  assert.equal((await agent.prompt(sessionId, "make some files")).stopReason, "end_turn");
  assert.ok(
    editor.calls.some((c) => c.method === "terminal/create"),
    "the command ran in the editor's terminal",
  );
  assert.deepEqual(
    ["tool", "tool/new.txt", "cmd", "cmd/file"].map((p) => mode(join(workdir, p))),
    ["750", "640", "750", "640"],
  );
  assert.equal(mode(join(workdir, "tool/kept.txt")), "600", "a file that exists keeps its own mode");
});
