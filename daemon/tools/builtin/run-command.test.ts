import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import type { CommandRunner } from "../types.js";
import { call, fixture, prepared, type Fixture } from "../../../test/support/tool-fixture.js";
import { runCommandTool } from "./run-command.js";

let f: Fixture;
beforeEach(() => (f = fixture()));
afterEach(() => f.cleanup());

test("run_command runs in cwd and reports exit code and output", async () => {
  const c = prepared(runCommandTool, { command: "echo hi && pwd" }, f.ctx);
  assert.equal(c.title, "Run `echo hi && pwd`");
  assert.equal(c.kind, "execute");
  assert.deepEqual(c.access, { type: "execute", command: "echo hi && pwd", cwd: f.dir });
  const r = await c.run(f.ctx);
  assert.equal(r.failed, undefined);
  assert.equal(r.output, `Exit code: 0\nOutput:\nhi\n${f.dir}`);
  assert.deepEqual(r.content, [{ type: "content", content: { type: "text", text: `hi\n${f.dir}\n` } }]);
});

test("a non-zero exit is a completed call that names the code", async () => {
  const r = await call(runCommandTool, { command: "echo bad >&2; exit 2" }, f.ctx);
  assert.equal(r.failed, undefined);
  assert.equal(r.output, "Exit code: 2\nOutput:\nbad");
});

test("cwd must stay inside the workspace roots", async () => {
  mkdirSync(join(f.dir, "sub"));
  const inside = await call(runCommandTool, { command: "pwd", cwd: "sub" }, f.ctx);
  assert.match(inside.output, /sub$/);
  assert.equal(prepared(runCommandTool, { command: "pwd", cwd: "sub" }, f.ctx).title, "Run `pwd` in sub");
  const outside = await call(runCommandTool, { command: "pwd", cwd: ".." }, f.ctx);
  assert.equal(outside.failed, true);
  assert.match(outside.output, /outside the workspace/);
  assert.equal(runCommandTool.prepare({ command: "x", timeoutSeconds: 601 }, f.ctx).ok, false);
});

test("a timeout is a failed call", async () => {
  const r = await call(runCommandTool, { command: "echo started; sleep 30", timeoutSeconds: 0.3 }, f.ctx);
  assert.equal(r.failed, true);
  assert.match(r.output, /^Timed out after 0\.3 s.*\nOutput:\nstarted$/);
  assert.equal(r.rawOutput?.timedOut, true);
});

test("cancel stops the command and fails the call", async () => {
  const running = call(runCommandTool, { command: "sleep 30" }, f.ctx);
  setTimeout(() => f.abort.abort(), 200);
  const r = await running;
  assert.equal(r.failed, true);
  assert.match(r.output, /^Cancelled/);
});

test("an editor terminal is announced while running and shown as the result", async () => {
  const editorTerminal: CommandRunner = {
    async run(command, opts) {
      opts.onTerminal?.("term-7");
      return { exitCode: 0, signal: null, output: `ran ${command}`, truncated: true, timedOut: false, cancelled: false, terminalId: "term-7" };
    },
  };
  const r = await call(runCommandTool, { command: "make" }, { ...f.ctx, commands: editorTerminal });
  assert.deepEqual(f.updates, [{ content: [{ type: "terminal", terminalId: "term-7" }] }]);
  assert.deepEqual(r.content, [
    { type: "terminal", terminalId: "term-7" },
    { type: "content", content: { type: "text", text: "ran make" } },
  ]);
  assert.equal(r.output, "Exit code: 0\nOutput:\nran make\n[output truncated]");
});

test("long output reaches the model bounded, and the editor as its last lines", async () => {
  const r = await call(runCommandTool, { command: "seq 1 20000" }, f.ctx);
  assert.match(r.output, /\[\.\.\. \d+ bytes omitted \.\.\.\]/);
  assert.ok(r.output.endsWith("\n20000"));
  assert.ok(r.output.length < 34 * 1024);
  // The editor is shown the end: the last 64 lines.
  assert.equal(r.content?.length, 1);
  const text = (r.content![0] as { content: { text: string } }).content.text;
  assert.match(text, /^\[… \d+ earlier bytes of output not shown; its end follows\]\n19937\n/);
  assert.ok(text.endsWith("\n20000\n"));
});

test("trailing blanks are trimmed in linear time: 1 MiB of spaces before the last word, and after it", { timeout: 10_000 }, async () => {
  // /\s+$/ retried from each of these spaces to the end of the run: minutes for a MiB.
  const spaces = " ".repeat(1024 * 1024);
  const editorTerminal: CommandRunner = {
    async run() {
      return { exitCode: 0, signal: null, output: `${spaces}x${spaces}\n\t`, truncated: false, timedOut: false, cancelled: false, terminalId: "term-8" };
    },
  };
  const r = await call(runCommandTool, { command: "make" }, { ...f.ctx, commands: editorTerminal });
  assert.equal(r.output, `Exit code: 0\nOutput:\n${spaces}x`);
});
