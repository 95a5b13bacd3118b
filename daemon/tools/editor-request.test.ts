import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { routedCommands, terminalCommand } from "./editor-commands.js";
import { routedFiles } from "./editor-files.js";
import { askEditor, EditorSilentError, EditorTimeoutError } from "./editor-request.js";
import { EditorSilence } from "./editor-silence.js";
import { localCommands } from "./local-commands.js";
import { localFiles } from "./local-files.js";
import type { CommandRunner, EditorPort } from "./types.js";

const dir = realpathSync(mkdtempSync(join(tmpdir(), "reasonix-editor-")));
after(() => rmSync(dir, { recursive: true, force: true }));

interface Call {
  method: string;
  signal: AbortSignal | undefined;
}

/** A window that answers only the methods given and sits on every other request until withdrawn. */
function editor(answers: Record<string, unknown> = {}): { port: EditorPort; calls: Call[]; asked(method: string): Promise<void> } {
  const calls: Call[] = [];
  const waiters: { method: string; resolve(): void }[] = [];
  const port: EditorPort = {
    closed: false,
    request(method, _params, opts) {
      calls.push({ method, signal: opts?.signal });
      for (const w of waiters.filter((w) => w.method === method)) w.resolve();
      if (Object.hasOwn(answers, method)) return Promise.resolve(answers[method]);
      return new Promise((_resolve, reject) => {
        opts?.signal?.addEventListener("abort", () => reject(new Error(`${method} withdrawn`)), { once: true });
      });
    },
  };
  const asked = (method: string): Promise<void> =>
    calls.some((c) => c.method === method) ? Promise.resolve() : new Promise((resolve) => waiters.push({ method, resolve }));
  return { port, calls, asked };
}

const noLocal: CommandRunner = {
  run: () => Promise.reject(new Error("the command should have gone to the editor")),
};

test("a request the editor never answers is withdrawn at its bound and fails naming the method", async () => {
  const e = editor();
  await assert.rejects(askEditor(e.port, "fs/read_text_file", {}, { timeoutMs: 20 }), (err: unknown) => {
    assert.ok(err instanceof EditorTimeoutError);
    assert.match(err.message, /^the editor did not answer fs\/read_text_file within [\d.]+ s$/);
    return true;
  });
  assert.equal(e.calls[0]!.signal!.aborted, true);
  const cancel = new AbortController();
  const pending = askEditor(e.port, "terminal/create", {}, { timeoutMs: 60_000, signal: cancel.signal });
  cancel.abort();
  await assert.rejects(pending, /terminal\/create withdrawn/);
  assert.equal(e.calls[1]!.signal!.aborted, true);
});

test("fs through a silent editor: a read falls back to the disk, a write fails with the bound in its message", async () => {
  const p = join(dir, "a.txt");
  writeFileSync(p, "on disk\n");
  const e = editor();
  const files = routedFiles("s1", () => e.port, localFiles(0o022), new AbortController().signal, 20);
  assert.deepEqual(await files.read(p), { text: "on disk\n", encoding: "utf8" });
  await assert.rejects(files.write(p, "new\n"), /the editor did not answer fs\/write_text_file within/);
  assert.deepEqual(
    e.calls.map((c) => [c.method, c.signal?.aborted]),
    [
      ["fs/read_text_file", true],
      ["fs/write_text_file", true],
    ],
  );
});

test("terminal/create follows the turn's cancel and has a bound of its own", async () => {
  const e = editor();
  const cancel = new AbortController();
  const run = routedCommands("s1", () => e.port, noLocal, 60_000, {}).run("true", { cwd: dir, timeoutMs: 60_000, signal: cancel.signal, umask: 0o022 });
  cancel.abort();
  await assert.rejects(run, /terminal\/create withdrawn/);
  const bounded = routedCommands("s1", () => e.port, noLocal, 20, {}).run("true", {
    cwd: dir,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    umask: 0o022,
  });
  await assert.rejects(bounded, /the editor did not answer terminal\/create within/);
});

test("wait_for_exit lasts as long as the command may, is then withdrawn, and the terminal is killed and released", async () => {
  const e = editor({
    "terminal/create": { terminalId: "t1" },
    "terminal/kill": {},
    "terminal/output": { output: "partial", truncated: false },
    "terminal/release": {},
  });
  const r = await routedCommands("s1", () => e.port, noLocal, 60_000, {}).run("sleep 100", {
    cwd: dir,
    timeoutMs: 20,
    signal: new AbortController().signal,
    umask: 0o022,
  });
  assert.equal(r.timedOut, true);
  assert.equal(r.output, "partial");
  assert.deepEqual(
    e.calls.map((c) => c.method),
    ["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/output", "terminal/release"],
  );
  assert.equal(e.calls[1]!.signal!.aborted, true);

  const cancel = new AbortController();
  const e2 = editor({
    "terminal/create": { terminalId: "t2" },
    "terminal/kill": {},
    "terminal/output": { output: "", truncated: false },
    "terminal/release": {},
  });
  const pending = routedCommands("s1", () => e2.port, noLocal, 60_000, {}).run("sleep 100", {
    cwd: dir,
    timeoutMs: 60_000,
    signal: cancel.signal,
    umask: 0o022,
  });
  await e2.asked("terminal/wait_for_exit");
  cancel.abort();
  const c = await pending;
  assert.equal(c.cancelled, true);
  assert.equal(e2.calls[1]!.signal!.aborted, true);
  assert.equal(e2.calls.at(-1)!.method, "terminal/release");
});

/** A window that remembers what it let time out, on a clock the test moves; `warnings` as logged. */
function silentWindow(answers: Record<string, unknown> = {}) {
  const e = editor(answers);
  let clock = 0;
  const warnings: string[] = [];
  const silence = new EditorSilence(
    (method) => warnings.push(method),
    1000,
    () => clock,
  );
  const port: EditorPort = { ...e.port, request: e.port.request, silence };
  return { ...e, port, silence, warnings, tick: (ms: number) => (clock += ms) };
}

test("a method that timed out is not asked again until askAgainMs has passed; an answer clears it; each timeout warns once", async () => {
  const w = silentWindow();
  await assert.rejects(askEditor(w.port, "fs/read_text_file", {}, { timeoutMs: 10 }), EditorTimeoutError);
  assert.deepEqual(w.warnings, ["fs/read_text_file"]);
  await assert.rejects(askEditor(w.port, "fs/read_text_file", {}, { timeoutMs: 10 }), (err: unknown) => {
    assert.ok(err instanceof EditorSilentError);
    assert.match(err.message, /^the editor did not answer fs\/read_text_file lately/);
    return true;
  });
  assert.equal(w.calls.length, 1, "the second was not sent");
  assert.equal(w.silence.silent("terminal/create"), false, "only that method is marked");
  w.tick(1000);
  await assert.rejects(askEditor(w.port, "fs/read_text_file", {}, { timeoutMs: 10 }), EditorTimeoutError, "asked again, and silent again");
  assert.deepEqual(w.warnings, ["fs/read_text_file", "fs/read_text_file"]);
  assert.equal(w.calls.length, 2);
  w.silence.answered("fs/read_text_file", false);
  assert.equal(w.silence.silent("fs/read_text_file"), false);
});

test("through a silent window: reads go to the disk at once; a write goes to the disk only if the window never took one; commands run here", async () => {
  const p = join(dir, "silent.txt");
  writeFileSync(p, "on disk\n");
  const w = silentWindow({ "fs/write_text_file": {} });
  const files = routedFiles("s1", () => w.port, localFiles(0o022), new AbortController().signal, 10);
  assert.deepEqual(await files.read(p), { text: "on disk\n", encoding: "utf8" });
  assert.deepEqual(await files.read(p), { text: "on disk\n", encoding: "utf8" });
  assert.equal(w.calls.filter((c) => c.method === "fs/read_text_file").length, 1, "one read waited, the next did not ask");

  // Never took a write: the disk, as for a window without fs.
  w.silence.timedOut("fs/write_text_file", 10);
  await files.write(p, "to disk\n");
  assert.equal(readFileSync(p, "utf8"), "to disk\n");
  assert.equal(w.calls.filter((c) => c.method === "fs/write_text_file").length, 0);

  // Took a write before: its buffer may hold it unsaved, so neither the editor nor the disk.
  w.tick(1000);
  await files.write(p, "to the buffer\n");
  w.silence.timedOut("fs/write_text_file", 10);
  await assert.rejects(files.write(p, "around the buffer\n"), /did not answer fs\/write_text_file lately.*Not written to the disk either/);
  assert.equal(readFileSync(p, "utf8"), "to disk\n");

  // A command: here, when any bounded terminal request timed out lately.
  w.silence.timedOut("terminal/output", 10);
  const r = await routedCommands("s1", () => w.port, localCommands({ PATH: process.env.PATH }), 60_000, { PATH: process.env.PATH }).run("echo here", {
    cwd: dir,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    umask: 0o022,
  });
  assert.equal(r.output, "here\n");
  assert.equal(r.terminalId, undefined);
  assert.equal(w.calls.filter((c) => c.method.startsWith("terminal/")).length, 0);
});

test("terminalCommand: what the editor's terminal has and the session does not is unset, by bwrap or by env -u, and only names go on the line", () => {
  const editorEnv = { PATH: process.env.PATH, GITHUB_TOKEN: "ghp-secret", SHARED: "editor's" };
  const sessionEnv = { PATH: process.env.PATH, SHARED: "session's" };
  const shell = { file: "/bin/sh", args: ["-c", "env"] };
  const bare = terminalCommand(shell, false, editorEnv, sessionEnv);
  assert.equal(bare.command, "/usr/bin/env");
  assert.deepEqual(bare.args, ["-u", "GITHUB_TOKEN", "/bin/sh", "-c", "env"]);
  assert.ok(!JSON.stringify(bare).includes("ghp-secret"));
  // Run as an editor runs a terminal: its own environment, then the request's `env` over it.
  const env: Record<string, string | undefined> = { ...editorEnv };
  for (const v of bare.env) env[v.name] = v.value;
  const out = execFileSync(bare.command, bare.args, { env, encoding: "utf8" });
  assert.doesNotMatch(out, /GITHUB_TOKEN/);
  assert.match(out, /^SHARED=session's$/m);
  const boxed = terminalCommand({ file: "/usr/bin/bwrap", args: ["--unshare-pid", "--", "/bin/sh", "-c", "env"] }, true, editorEnv, sessionEnv);
  assert.equal(boxed.command, "/usr/bin/bwrap");
  assert.deepEqual(boxed.args, ["--unsetenv", "GITHUB_TOKEN", "--unshare-pid", "--", "/bin/sh", "-c", "env"]);
  assert.deepEqual(terminalCommand(shell, false, sessionEnv, sessionEnv).command, "/bin/sh", "nothing to unset: the line as it was");
});
