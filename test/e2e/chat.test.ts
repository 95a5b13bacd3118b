/**
 * `reasonix chat` and `reasonix attach`, the terminal client: in a pipe (line-oriented, no colour)
 * and in a pseudo-terminal (`script` from util-linux gives it a real tty; keys are written to it).
 * The daemon, model and store are the same as every other end-to-end test's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { BIN, agentEnv } from "../support/harness.js";
import { world } from "./fixture.js";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function chatEnv(home: string, modelUrl?: string): NodeJS.ProcessEnv {
  return agentEnv({ home, ...(modelUrl ? { model: { url: modelUrl } } : {}) });
}

/** `reasonix chat` in a pipe: stdin is `input`, the result once it exits. */
function pipeChat(env: NodeJS.ProcessEnv, args: string[], input: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "chat", ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A terminal session: `reasonix` under `script`, whose stdin are our keys and whose output we read. */
class Terminal {
  readonly child: ChildProcess;
  screen = "";
  private waiters = new Set<() => void>();
  constructor(env: NodeJS.ProcessEnv, args: string[]) {
    const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    this.child = spawn("script", ["-qfec", command, "/dev/null"], { env: { ...env, TERM: "xterm" }, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout!.setEncoding("utf8").on("data", (c: string) => {
      this.screen += c;
      for (const w of [...this.waiters]) w();
    });
  }
  /** What the screen shows, without colour codes. */
  text(): string {
    return this.screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");
  }
  keys(s: string): void {
    this.child.stdin!.write(s);
  }
  until(what: string, pred: (text: string) => boolean, ms = 15_000): Promise<void> {
    if (pred(this.text())) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`${what}: not on screen within ${ms} ms:\n${this.text().slice(-2000)}`));
      }, ms);
      const check = (): void => {
        if (!pred(this.text())) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }
  exited(): Promise<number | null> {
    return new Promise((resolve) => (this.child.exitCode !== null ? resolve(this.child.exitCode) : this.child.once("exit", (c) => resolve(c))));
  }
}

test("chat in a terminal: a typed prompt streams its answer, and a permission question is answered with a key", async (t) => {
  const { agent, home, model, workdir } = await world(t);
  // The daemon is up (in this process) before the terminal client looks for it.
  await agent.initialize();
  model.enqueue(
    { content: ["Let me ", "check."], toolCalls: [{ name: "run_command", arguments: { command: "echo from-the-command" } }] },
    { content: ["All ", "done here."] },
  );
  const term = new Terminal(chatEnv(home.dir, model.url), ["chat", "--cwd", workdir]);
  t.after(() => term.child.kill("SIGKILL"));
  await term.until("the prompt", (s) => s.includes("›"));
  term.keys("please check\r");
  await term.until("the permission question", (s) => /Permission: .*echo from-the-command[\s\S]*press 1-4/.test(s));
  term.keys("1");
  await term.until("the answer", (s) => s.includes("All done here."));
  const screen = term.text();
  assert.match(screen, /Let me check\./);
  assert.match(screen, /✓ .*echo from-the-command/);
  assert.match(screen, /from-the-command\n/, "the command's output, as text");
  assert.doesNotMatch(screen, /"exitCode"|\{"/, "no raw JSON");
  assert.equal(model.requests.at(-1)!.body.messages.at(-1).role, "tool");
  term.keys("\x03\x03");
  assert.equal(await term.exited(), 0);
});

test("attach: an editor's slow turn streams on in the terminal, a typed line steers it, Ctrl-C cancels it for the editor too, and the session stays", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 60 }, { content: ["steered answer"] });
  const first = agent.prompt(sessionId, "write slowly");
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");

  const term = new Terminal(chatEnv(home.dir, model.url), ["attach", sessionId, "--cwd", workdir]);
  t.after(() => term.child.kill("SIGKILL"));
  await term.until("attached", (s) => s.includes(`attached to session ${sessionId}`));
  await term.until("live chunks", (s) => /w3[0-9] /.test(s));
  term.keys("also mention the tests\r");
  await term.until("the steer accepted", (s) => s.includes("steer accepted"));
  assert.equal((await first).stopReason, "end_turn");
  await model.waitForRequests(2);
  // Once in a loaded series the second request ended with the first prompt: each request's last messages say what the model was sent.
  const sent = model.requests.map((r, i) => `request ${i}: ${JSON.stringify(r.body.messages.slice(-3)).slice(0, 400)}`).join("\n");
  assert.deepEqual(model.requests[1]!.body.messages.at(-1), { role: "user", content: "also mention the tests" }, sent);
  await term.until("the steered answer, live", (s) => s.includes("steered answer"));

  // Another slow turn from the editor; Ctrl-C in the terminal cancels it.
  model.enqueue({ content: Array.from({ length: 200 }, (_, i) => `x${i} `), chunkDelayMs: 50 });
  const second = agent.prompt(sessionId, "again, slowly");
  await term.until("the second turn streaming", (s) => s.includes("x2 "));
  term.keys("\x03");
  assert.equal((await second).stopReason, "cancelled", "the editor sees the cancel");
  term.keys("\x03");
  assert.equal(await term.exited(), 0);
  const listed = await agent.rpc.request("session/list", { cwd: workdir });
  assert.ok(
    listed.sessions.some((s: { sessionId: string }) => s.sessionId === sessionId),
    "still listed",
  );
  assert.ok((await agent.rpc.request("session/load", { sessionId, cwd: workdir, mcpServers: [] })).configOptions, "still loadable");
});

test("pipe mode: echo hi | reasonix chat prints the answer and exits 0; without a key it says what to run and exits non-zero before any turn", async (t) => {
  // No key anywhere but in the environment of the chat runs that are given one.
  const { agent, home, model, workdir } = await world(t, { noModel: true });
  await agent.initialize();
  model.enqueue({ content: ["Hello ", "there."] });
  const ok = await pipeChat(chatEnv(home.dir, model.url), ["--cwd", workdir], "hi\n");
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^Hello there\.\n[\d,]+ \/ [\d,]+ tokens · \d+\.\d{4} CNY\n$/);
  assert.doesNotMatch(ok.stdout, /\x1b\[/, "no colour in a pipe");

  const noKey = await pipeChat(agentEnv({ home: home.dir }), ["--cwd", workdir], "hi\n");
  assert.notEqual(noKey.code, 0);
  assert.match(noKey.stdout, /Set DEEPSEEK_API_KEY .* or run `reasonix setup`/);
  assert.equal(model.requests.length, 1, "no turn was started without a key");

  model.enqueue({ content: ["cancel me"], finishReason: "stop" });
  const oneShot = await pipeChat(chatEnv(home.dir, model.url), ["--cwd", workdir, "-p", "one question"], "");
  assert.equal(oneShot.code, 0);
  assert.match(oneShot.stdout, /cancel me/);
});

test("pipe mode renders every update kind for a person: message, thought, tool call with its diff, command output, plan, usage, a permission question; never raw JSON", async (t) => {
  const { agent, home, model, workdir } = await world(t);
  await agent.initialize();
  model.enqueue(
    {
      reasoning: ["thinking about it"],
      toolCalls: [
        {
          name: "todo_write",
          arguments: {
            todos: [
              { content: "write the file", status: "completed" },
              { content: "run it", status: "in_progress" },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 1200, completion_tokens: 30 },
    },
    { toolCalls: [{ name: "write_file", arguments: { path: "two.txt", content: "line one\nline two\n" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command: "cat two.txt" } }] },
    { content: ["Finished."] },
  );
  // The permission question for the command takes the next line, "1" (allow once).
  const run = await pipeChat(chatEnv(home.dir, model.url), ["--cwd", workdir], "make two.txt\n1\n");
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const out = run.stdout;
  assert.match(out, /\(thinking\) thinking about it/);
  assert.match(out, /Plan\n {2}\[x\] write the file\n {2}\[~\] run it/);
  assert.match(out, /✓ Write two\.txt \(\+2 -0\)/, "a two-line file is +2");
  assert.match(out, /Permission: Run `cat two\.txt`\n {2}\[1\] Allow once/);
  assert.match(out, /→ Allow once/);
  assert.match(out, /✓ Run `cat two\.txt`\n {4}line one\n {4}line two/);
  // The turn wrote a file: its checkpoint line follows the answer.
  assert.match(
    out,
    /Finished\.\n\n\[checkpoint 1\] Saved the prior state of 1 file this turn changed \(two\.txt\); `\/undo` restores it\.\n[\d,]+ \/ [\d,]+ tokens · \d+\.\d{4} CNY/,
  );
  assert.doesNotMatch(out, /\{"|"exitCode"|"sessionUpdate"/);
});

test("reasonix sessions shows what each session is doing and how many windows are attached", async (t) => {
  const { agent, home, model, workdir } = await world(t);
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue({ content: ["slow "], hang: true });
  const pending = agent.prompt(sessionId, "long work");
  pending.catch(() => undefined);
  await agent.waitForUpdate((u) => u.update.sessionUpdate === "agent_message_chunk");
  const listed = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, [BIN, "sessions", "--cwd", workdir], { env: agentEnv({ home: home.dir }) });
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (text += c));
    child.on("close", () => resolve(text));
  });
  assert.match(listed, new RegExp(`${sessionId}\\s+running\\s+1 window\\s`));
  await agent.cancel(sessionId);
  await pending;
});
