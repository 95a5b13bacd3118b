import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { JobTable } from "./jobs.js";
import { localCommands } from "./local-commands.js";
import { bwrapArgs, sandboxOf, sandboxStopNote, SessionSandbox, type SandboxSpec } from "./sandbox.js";
import { probeSandbox, sandboxProber } from "./sandbox-probe.js";

const status = await probeSandbox(process.env.PATH);
const skip = status.available ? false : `no sandbox here: ${status.reason}`;

function place(t: { after(fn: () => void): void }): { root: string; outside: string; hidden: string; tmp: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-sbx-")));
  // Outside both the workspace and /tmp (which the sandbox replaces with its own).
  const outside = realpathSync(mkdtempSync("/var/tmp/rx-sbx-out-"));
  t.after(() => {
    rmSync(base, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const dirs = { root: join(base, "ws"), outside, hidden: join(base, "ws", "home"), tmp: join(base, "tmp") };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  writeFileSync(join(dirs.outside, "secret.txt"), "outside secret\n");
  writeFileSync(join(dirs.hidden, "token"), "daemon token\n");
  mkdirSync(join(dirs.root, ".git", "hooks"), { recursive: true });
  writeFileSync(join(dirs.root, ".git", "config"), "[core]\n");
  return dirs;
}

function spec(over: Partial<SandboxSpec> & Pick<SandboxSpec, "roots">): SandboxSpec {
  return {
    bwrap: status.available ? status.bwrap : "/usr/bin/bwrap",
    preset: "workspace-write",
    hidden: [],
    readable: [],
    tmp: undefined,
    network: true,
    ...over,
  };
}

async function sh(command: string, s: SandboxSpec, cwd: string, umask = 0o022): Promise<{ exitCode: number | null; output: string }> {
  const r = await localCommands({ PATH: process.env.PATH, SECRET_CANARY: "in-the-session-env" }).run(command, {
    cwd,
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    umask,
    sandbox: sandboxOf(s),
  });
  return { exitCode: r.exitCode, output: r.output };
}

test("mounts go shallowest first, so a root inside /tmp, a hidden folder inside a root and .git inside a root each win", () => {
  const args = bwrapArgs(spec({ roots: ["/tmp/ws"], hidden: ["/"], tmp: "/var/tmp/s" }), "/tmp/ws");
  const at = (a: string, b: string) => args.findIndex((x, i) => x === a && args[i + 1] === b);
  assert.ok(at("--ro-bind", "/") < at("--bind", "/var/tmp/s"));
  assert.ok(at("--bind", "/var/tmp/s") < at("--bind", "/tmp/ws"), "the root comes after /tmp");
  assert.deepEqual(args.slice(-5), ["TMPDIR", "/tmp", "--chdir", "/tmp/ws", "--"]);
  assert.ok(!args.includes("--unshare-net"), "network on by default");
  assert.ok(bwrapArgs(spec({ roots: ["/x"], network: false }), "/x").includes("--unshare-net"));
  const ro = bwrapArgs(spec({ roots: ["/x"], preset: "read-only", tmp: "/var/tmp/s" }), "/x");
  assert.ok(ro.includes("--tmpfs") && !ro.includes("/var/tmp/s"), "read-only gets an empty /tmp, never the session's folder");
  assert.ok(!ro.includes("--bind"), "read-only binds nothing writable");
});

test("in workspace-write a command writes its roots and /tmp, nothing outside, not .git, and sees neither the hidden folders nor other processes", {
  skip,
}, async (t) => {
  const d = place(t);
  const s = spec({ roots: [d.root], hidden: [d.hidden], tmp: d.tmp });
  const r = await sh(
    [
      // One stream, in order: a failed redirection's complaint comes from the shell itself.
      "exec 2>&1",
      "echo inside > made.txt && echo made",
      `echo x > ${d.outside}/new.txt 2>&1 || echo outside-refused`,
      "echo x >> .git/config 2>&1 || echo git-refused",
      "echo x > .git/hooks/pre-commit 2>&1 || echo hook-refused",
      `ls -A ${d.hidden} | wc -l`,
      `cat ${d.outside}/secret.txt`,
      "echo t > /tmp/t && echo tmp-ok",
      "ls /proc | grep -c '^[0-9]'",
      "cat /proc/1/environ | tr '\\0' '\\n' | grep -c SECRET_CANARY",
    ].join("; "),
    s,
    d.root,
  );
  const lines = r.output.trim().split("\n");
  assert.ok(lines.includes("made") && existsSync(join(d.root, "made.txt")), r.output);
  assert.ok(lines.includes("outside-refused") && !existsSync(join(d.outside, "new.txt")), r.output);
  assert.ok(lines.includes("git-refused") && readFileSync(join(d.root, ".git", "config"), "utf8") === "[core]\n", r.output);
  assert.ok(lines.includes("hook-refused") && !existsSync(join(d.root, ".git", "hooks", "pre-commit")), r.output);
  assert.ok(lines.includes("0"), `the hidden folder is empty: ${r.output}`);
  assert.ok(lines.includes("outside secret"), "reading outside is allowed (as in Codex's sandbox)");
  assert.ok(lines.includes("tmp-ok") && existsSync(join(d.tmp, "t")), "the session's /tmp is the folder given");
  const procs = Number(lines.at(-2));
  assert.ok(procs > 0 && procs < 10, `only the sandbox's own processes are visible (${procs})`);
  assert.match(r.output, /Read-only file system/);
});

test("in read-only nothing on disk is writable, the workspace included; /tmp is empty and private", { skip }, async (t) => {
  const d = place(t);
  writeFileSync(join(d.tmp, "left"), "x");
  const r = await sh(
    // One stream, in order, as above: `2>&1` after a failing `> in.txt` comes too late to carry the
    // shell's complaint, which otherwise arrives on stderr, before or after the rest.
    "exec 2>&1; echo x > in.txt || echo refused; ls -A /tmp | grep -c left; echo y > /tmp/y && echo tmp-ok",
    spec({ roots: [d.root], preset: "read-only", tmp: d.tmp }),
    d.root,
  );
  assert.match(r.output, /in\.txt: Read-only file system\nrefused\n/);
  assert.deepEqual(r.output.trim().split("\n").slice(-3), ["refused", "0", "tmp-ok"]);
  assert.equal(existsSync(join(d.root, "in.txt")), false);
  assert.equal(existsSync(join(d.tmp, "y")), false);
});

test("sandbox.network false: a command cannot reach a listener on this machine; true: it can", { skip }, async (t) => {
  const d = place(t);
  const server = createServer((c) => c.end("hello from the host\n"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;
  const connect = `${process.execPath} -e "require('net').connect(${port},'127.0.0.1').on('data',d=>{process.stdout.write(d);process.exit(0)}).on('error',e=>{console.log(e.code);process.exit(3)})"`;
  const on = await sh(connect, spec({ roots: [d.root], network: true }), d.root);
  assert.equal(on.output.trim(), "hello from the host");
  const off = await sh(connect, spec({ roots: [d.root], network: false }), d.root);
  assert.equal(off.exitCode, 3);
  assert.equal(off.output.trim(), "ECONNREFUSED");
});

test("a sandboxed command runs under the session's umask, in the workspace and in its /tmp", { skip }, async (t) => {
  const d = place(t);
  const r = await sh(
    "umask; mkdir made /tmp/made && touch made/file /tmp/made/file && stat -c %a made made/file /tmp/made /tmp/made/file",
    spec({ roots: [d.root], tmp: d.tmp }),
    d.root,
    0o027,
  );
  assert.equal(r.exitCode, 0, r.output);
  assert.equal(r.output, "0027\n750\n640\n750\n640\n");
});

test("a failed command whose output says the sandbox stopped it gets a note naming the way out", () => {
  const s = sandboxOf(spec({ roots: ["/w"], network: false }));
  assert.match(sandboxStopNote(s, "touch: cannot touch '/etc/x': Read-only file system") ?? "", /outsideSandbox: true/);
  assert.match(sandboxStopNote(s, "curl: (6) Could not resolve host: example.com") ?? "", /Could not resolve host/);
  assert.equal(sandboxStopNote(sandboxOf(spec({ roots: ["/w"], network: true })), "curl: (6) Could not resolve host: example.com"), undefined);
  assert.equal(sandboxStopNote(s, "FAIL test/a.test.ts"), undefined);
  assert.match(sandboxStopNote(s, "/bin/sh: 1: cannot create /tmp/build/x.txt: Directory nonexistent") ?? "", /\/tmp is private to the sandbox/);
  assert.equal(sandboxStopNote(s, "cat: src/missing.ts: No such file or directory"), undefined);
});

test("a session's sandbox: none in danger-full-access or without bubblewrap; its /tmp made on first use in the daemon's folder and removed by dispose", async (t) => {
  const tmpRoot = join(mkdtempSync(join(tmpdir(), "rx-box-")), "sandbox-tmp");
  t.after(() => rmSync(dirname(tmpRoot), { recursive: true, force: true }));
  const missing = new SessionSandbox({ status: sandboxProber("/nonexistent"), hidden: [], network: () => true, tmpRoot });
  assert.equal(await missing.plan("workspace-write", ["/w"]), undefined);
  const found = await missing.status();
  assert.ok(!found.available && /bubblewrap is not installed/.test(found.reason), JSON.stringify(found));
  if (!status.available) return;
  const box = new SessionSandbox({ status: async () => status, hidden: [], network: () => false, tmpRoot });
  assert.equal(await box.plan("danger-full-access", ["/w"]), undefined);
  const plan = await box.plan("workspace-write", ["/w"]);
  const tmp = plan!.spec.tmp!;
  assert.ok(existsSync(tmp));
  assert.equal(dirname(tmp), tmpRoot, "made in the daemon's own folder, never in the shared /tmp");
  assert.equal(statSync(tmpRoot).mode & 0o777, 0o700);
  assert.equal((await box.plan("read-only", ["/w"]))!.spec.preset, "read-only");
  box.dispose();
  assert.equal(existsSync(tmp), false);
});

test("the run's mark goes among bwrap's options only when asked for", () => {
  const plain = bwrapArgs(spec({ roots: ["/x"] }), "/x");
  assert.ok(!plain.some((a) => a.startsWith("REASONIX_RUN_")));
  const marked = bwrapArgs(spec({ roots: ["/x"] }), "/x", { newSession: true, runId: "abc" });
  assert.ok(marked.indexOf("REASONIX_RUN_abc") < marked.indexOf("--"));
  assert.equal(marked[marked.indexOf("REASONIX_RUN_abc") - 1], "--unsetenv", "a no-op for the command's environment");
});

/** Live processes whose command line holds `word`. */
function withWord(word: string): number[] {
  const found: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      if (readFileSync(`/proc/${e}/cmdline`, "utf8").includes(word) && stat[stat.lastIndexOf(")") + 2] !== "Z") found.push(Number(e));
    } catch {
      // gone
    }
  }
  return found;
}

// The daemon's own runner keeps the command in its process group (no --new-session), and the inner
// bwrap with it: a kill in bwrap's first ms still reaches it (TERM is ignored by a pid namespace's
// init, the KILL after the grace is not), and a setsid inside stays in the pid namespace. No sweep needed.
test("commands and jobs killed within ms of their start leave nothing running, a setsid inside included", { skip }, async (t) => {
  const d = place(t);
  const word = `${process.pid}${Date.now() % 10_000}`;
  const s = sandboxOf(spec({ roots: [d.root] }));
  const runner = localCommands({ PATH: process.env.PATH });
  const jobs = new JobTable();
  t.after(() => jobs.killAll());
  const runs = Array.from({ length: 8 }, async (_, i) => {
    const ac = new AbortController();
    const command = i % 2 ? `setsid sh -c 'sleep 30.${word}; touch late-${i}'` : `sleep 30.${word}; touch late-${i}`;
    const run = runner.run(command, { cwd: d.root, timeoutMs: 60_000, signal: ac.signal, umask: 0o022, sandbox: s });
    setTimeout(() => ac.abort(), i);
    return (await run).cancelled;
  });
  const started = Array.from({ length: 8 }, (_, i) =>
    jobs.start(`sleep 30.${word}; touch job-late-${i}`, d.root, { env: { PATH: process.env.PATH }, umask: 0o022, sandbox: s }),
  );
  const killed = started.map(async (job, i) => {
    await sleep(i);
    return (await jobs.kill(job.jobId)).state;
  });
  assert.deepEqual(await Promise.all(runs), Array(8).fill(true));
  assert.deepEqual(await Promise.all(killed), Array(8).fill("exited"));
  assert.deepEqual(withWord(`sleep 30.${word}`), [], "no process of any of them is left");
});
