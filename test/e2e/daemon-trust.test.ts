/**
 * The daemon every window can trust (issue 9): it survives a client that kills the shim's whole
 * process tree, the shim talks only to a socket of ours, any home path works, and a daemon that
 * cannot start says why — to the editor, as the error of its requests, and in `daemon status`.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Level } from "level";
import { AgentProcess, BIN, daemonPid, isAlive, makeHome, stopDaemon, waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import { ScriptedModel } from "../support/scripted-model.js";
import { world, within, processTest, test } from "./fixture.js";

const NOBODY = 65534;

/** pid's parent, process group and session, from /proc/<pid>/stat. */
function procStat(pid: number): { ppid: number; pgrp: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(rest[1]), pgrp: Number(rest[2]), sid: Number(rest[3]) };
}

/** Every live descendant of `root`, found by walking /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { ppid } = procStat(Number(entry));
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // ended while we looked
    }
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/**
 * What acpx does when it exits: SIGKILL every descendant of the agent it launched, then the agent's
 * whole process group. Returns the descendants it killed.
 */
function killLikeAcpx(shimPid: number): number[] {
  const pgid = procStat(shimPid).pgrp;
  const killed = descendants(shimPid);
  for (const pid of killed) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  process.kill(-pgid, "SIGKILL");
  return killed;
}

/** `reasonix daemon status` for an environment: exit code and parsed JSON. */
function status(env: Record<string, string>): { code: number | null; json: any } {
  const out = spawnSync(process.execPath, [BIN, "daemon", "status"], { env: { ...process.env, ...env }, encoding: "utf8" });
  return { code: out.status, json: JSON.parse(out.stdout) };
}

/**
 * The shim could not have a daemon: `initialize` is answered within a few seconds with -32001 whose
 * message is the cause; later requests get the same answer, a notification none; the cause is on
 * stderr once; the shim exits 1 once stdin ends.
 */
async function refusedWith(agent: AgentProcess, expected: string): Promise<{ code: number; message: string; data: any }> {
  // A bound, not a timing: a shim and a daemon starting under two suites' load once took over 5 s.
  const err = await within(
    30_000,
    "initialize answered",
    agent.initialize().then(
      () => undefined,
      (e: { code: number; message: string; data: any }) => e,
    ),
  );
  assert.ok(err, "initialize must fail");
  assert.equal(err.code, -32001);
  assert.ok(err.message.includes(expected), `"${err.message}" should contain "${expected}"`);
  assert.equal(typeof err.data?.reason, "string");
  assert.equal(typeof err.data?.logPath, "string");
  await agent.cancel("nonexistent");
  const again = await agent.newSession("/tmp").then(
    () => undefined,
    (e: { code: number; message: string }) => e,
  );
  assert.deepEqual({ code: again?.code, message: again?.message }, { code: -32001, message: err.message });
  assert.equal(await agent.closeStdin(), 1);
  assert.equal(agent.stderr().split(err.message).length - 1, 1, `the cause once on stderr:\n${agent.stderr()}`);
  // Two requests, two answers, and nothing else (the notification went unanswered).
  assert.equal(agent.messages.length, 2);
  return err;
}

// ---------------------------------------------------------------------------------------------
// Detached for real

processTest("a client that kills the shim's descendants and process group never reaches the daemon; another window's turn finishes", async (t) => {
  // Window B's shim leads its own process group and, on this fresh home, starts the daemon.
  const { agent: b, spawn, model, home, workdir } = await world(t, { connector: "process", detached: true });
  await b.initialize();
  const daemon = await waitForDaemonPid(home.dir);

  // Window A has a turn streaming, held open until B is gone.
  const a = spawn({ detached: false });
  await a.initialize();
  const { sessionId } = await a.newSession(workdir);
  let release!: () => void;
  const hold = new Promise<void>((resolve) => (release = resolve));
  t.after(() => release());
  model.enqueue({ content: ["first ", "second ", "third"], holdUntil: hold });
  const turn = a.prompt(sessionId, "a long answer");
  const outcome = turn.then(
    (r: { stopReason: string }) => r,
    (e: Error) => e,
  );
  await a.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk");

  // B's client exits the way acpx does.
  const killed = killLikeAcpx(b.child.pid!);
  await within(5000, "B's shim killed", b.exited);
  for (const pid of killed) assert.equal(await waitForPidExit(pid, 5000), true, `descendant ${pid} survived SIGKILL`);
  assert.equal(isAlive(daemon), true, "the daemon survived");
  assert.ok(!killed.includes(daemon), "the daemon was a descendant of the shim that started it");
  assert.equal(daemonPid(home.dir), daemon);

  release();
  const result = await outcome;
  assert.ok(!(result instanceof Error), `A's turn failed: ${String(result)}`);
  assert.equal(result.stopReason, "end_turn");
  assert.equal(a.textOf(sessionId), "first second third");
});

for (const way of ["setsid", "node"] as const) {
  processTest(
    `a daemon started through ${way === "setsid" ? "setsid -f" : "the node intermediate"} leads its own session and group and is not the shim's child`,
    async (t) => {
      const { agent, home } = await world(t, { connector: "process", env: { REASONIX_DETACH: way } });
      await agent.initialize();
      const daemon = await waitForDaemonPid(home.dir);
      const st = procStat(daemon);
      assert.equal(st.sid, daemon);
      assert.equal(st.pgrp, daemon);
      assert.notEqual(st.ppid, agent.child.pid);
      // (A zombie the shim has not reaped yet counts as gone.)
      assert.deepEqual(descendants(agent.child.pid!).filter(isAlive), [], "the shim has no descendants left");
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Only our own socket

processTest("a socket folder that belongs to another user: the shim sends its socket nothing and initialize names the folder", async (t) => {
  let server: Server | undefined;
  let connections = 0;
  const received: Buffer[] = [];
  t.after(() => server?.close());
  const { agent, home } = await world(t, {
    connector: "process",
    prepare: async (dir) => {
      const run = join(dir, "run");
      mkdirSync(run, { mode: 0o700 });
      server = createServer((socket) => {
        connections++;
        socket.on("data", (d: Buffer) => received.push(d));
      });
      await new Promise<void>((resolve) => server!.listen(join(run, "daemon.sock"), resolve));
      chownSync(run, NOBODY, NOBODY);
    },
  });
  const run = join(home.dir, "run");
  const err = await refusedWith(agent, `refusing ${run}: it belongs to another user`);
  assert.equal(err.data.reason, "untrusted_socket");
  const shown = status({ REASONIX_HOME: home.dir });
  assert.equal(shown.code, 3);
  assert.equal(shown.json.running, false);
  assert.ok(shown.json.reason.includes(`refusing ${run}: it belongs to another user`), shown.json.reason);
  assert.equal(connections, 0, "nothing connected to the untrusted socket");
  assert.equal(Buffer.concat(received).length, 0);
  assert.equal(existsSync(join(run, "daemon.json")), false, "no daemon was started");
});

// ---------------------------------------------------------------------------------------------
// Any home path

processTest("a home whose run/daemon.sock is over 140 bytes works end to end; another sharing its first 107 bytes gets its own daemon", async (t) => {
  const base = await makeHome();
  const model = await ScriptedModel.start();
  const workdir = realpathSync(mkdtempSync(join(tmpdir(), "rx-ws-")));
  const stem = join(base.dir, "h".repeat(130));
  const homes = [`${stem}-one`, `${stem}-two`];
  const agents: AgentProcess[] = [];
  t.after(async () => {
    try {
      for (const a of agents) a.assertCleanWire();
    } finally {
      for (const a of agents) await a.kill("SIGKILL").catch(() => undefined);
      for (const home of homes) await stopDaemon(home);
      await base.cleanup();
      await model.close();
      rmSync(workdir, { recursive: true, force: true });
    }
  });
  assert.ok(Buffer.byteLength(join(homes[0]!, "run", "daemon.sock")) > 140);
  assert.equal(homes[0]!.slice(0, 107), homes[1]!.slice(0, 107));

  const infos: Array<{ pid: number; socket: string }> = [];
  for (const home of homes) {
    // Without XDG_RUNTIME_DIR the short folder is /tmp/reasonix-<uid>.
    const agent = AgentProcess.spawn({ home, model, cwd: workdir, env: { XDG_RUNTIME_DIR: undefined } });
    agents.push(agent);
    await agent.initialize();
    const { sessionId } = await agent.newSession(workdir);
    model.enqueue({ content: ["long ", "home"] });
    assert.equal((await agent.prompt(sessionId, "hello")).stopReason, "end_turn");
    assert.equal(agent.textOf(sessionId), "long home");
    const info = JSON.parse(readFileSync(join(home, "run", "daemon.json"), "utf8")) as { pid: number; socket: string };
    const hash = createHash("sha256").update(home).digest("hex").slice(0, 16);
    assert.equal(info.socket, `/tmp/reasonix-${process.getuid!()}/${hash}.sock`);
    assert.ok(existsSync(info.socket));
    infos.push(info);
  }
  assert.notEqual(infos[0]!.pid, infos[1]!.pid);
  assert.notEqual(infos[0]!.socket, infos[1]!.socket);
  assert.ok(infos.every((i) => isAlive(i.pid)));
  const shown = status({ REASONIX_HOME: homes[0]!, XDG_RUNTIME_DIR: "" });
  assert.equal(shown.code, 0);
  assert.equal(shown.json.pid, infos[0]!.pid);
});

// ---------------------------------------------------------------------------------------------
// Failures in their own words

processTest("config.json with an unknown key: initialize is answered with the key and the file; status says the same; a fixed config starts", async (t) => {
  const { agent, home, spawn } = await world(t, { connector: "process", prepare: (dir) => writeFileSync(join(dir, "config.json"), '{"modle":"x"}') });
  const err = await refusedWith(agent, 'unknown key "modle"');
  assert.ok(err.message.includes(join(home.dir, "config.json")), err.message);
  assert.equal(err.data.reason, "config_invalid");
  assert.equal(err.data.logPath, join(home.dir, "logs", "daemon.log"));
  const shown = status({ REASONIX_HOME: home.dir });
  assert.equal(shown.code, 3);
  assert.equal(shown.json.reason, err.message);
  assert.equal(shown.json.logFile, join(home.dir, "logs", "daemon.log"));

  writeFileSync(join(home.dir, "config.json"), '{"model":"deepseek/deepseek-v4-flash"}');
  const fixed = spawn();
  await fixed.initialize();
  assert.equal(existsSync(join(home.dir, "logs", "last-start-error")), false, "a good start clears the recorded failure");
});

test("a daemon that cannot start: the shim's own -32001 answers echo a request id too large for a JavaScript number exactly", async (t) => {
  const { agent } = await world(t, { raw: true, prepare: (dir) => writeFileSync(join(dir, "config.json"), '{"modle":"x"}') });
  const from = agent.stdoutLines.length;
  agent.writeRaw('{"jsonrpc":"2.0","id":18446744073709551617,"method":"initialize","params":{"protocolVersion":1}}\n');
  agent.writeRaw('{"jsonrpc":"2.0","id":-9007199254740993,"method":"session/list","params":{}}\n');
  await agent.waitForLine((m) => m.error?.code === -32001 && agent.stdoutLines.slice(from).length >= 2, 10_000);
  const lines = agent.stdoutLines.slice(from);
  assert.ok(lines[0]!.startsWith('{"jsonrpc":"2.0","id":18446744073709551617,"error":{"code":-32001,'), lines[0]);
  assert.ok(lines[1]!.startsWith('{"jsonrpc":"2.0","id":-9007199254740993,"error":{"code":-32001,'), lines[1]);
  assert.match(lines[0]!, /unknown key \\"modle\\"/);
});

processTest("a REASONIX_HOME that is a regular file: initialize is answered with its path; status says the same", async (t) => {
  const outside = mkdtempSync("/tmp/rx-file-");
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  const file = join(outside, "home");
  writeFileSync(file, "not a folder");
  const { agent } = await world(t, { connector: "process", env: { REASONIX_HOME: file } });
  const err = await refusedWith(agent, `REASONIX_HOME ${file} is not a folder`);
  assert.equal(err.data.reason, "home_invalid");
  const shown = status({ REASONIX_HOME: file });
  assert.equal(shown.code, 3);
  assert.equal(shown.json.reason, err.message);
});

processTest("a store another process holds open: initialize names that process; status says the same", async (t) => {
  let db: Level<string, string> | undefined;
  t.after(() => db?.close());
  const { agent, home } = await world(t, {
    connector: "process",
    prepare: async (dir) => {
      db = new Level<string, string>(join(dir, "db"));
      await db.open();
    },
  });
  const err = await refusedWith(agent, `the store at ${join(home.dir, "db")} is locked by process ${process.pid} (node)`);
  assert.equal(err.data.reason, "store_locked");
  const shown = status({ REASONIX_HOME: home.dir });
  assert.equal(shown.code, 3);
  assert.equal(shown.json.reason, err.message);
});

processTest("a damaged store: initialize says it is damaged, in LevelDB's words; status says the same", async (t) => {
  const { agent, home, workdir, spawn } = await world(t, { connector: "process" });
  await agent.initialize();
  await agent.newSession(workdir);
  const pid = await waitForDaemonPid(home.dir);
  assert.equal(await agent.closeStdin(), 0);
  const stop = spawnSync(process.execPath, [BIN, "daemon", "stop"], { env: { ...process.env, REASONIX_HOME: home.dir }, encoding: "utf8" });
  assert.match(stop.stdout, /stopped/);
  assert.equal(await waitForPidExit(pid, 5000), true);
  const dbDir = join(home.dir, "db");
  const manifest = readdirSync(dbDir).find((f) => f.startsWith("MANIFEST-"));
  assert.ok(manifest);
  writeFileSync(join(dbDir, manifest), "garbage, not a LevelDB manifest");

  const next = spawn();
  const err = await refusedWith(next, `the store at ${dbDir} is damaged: Corruption`);
  assert.equal(err.data.reason, "store_damaged");
  const shown = status({ REASONIX_HOME: home.dir });
  assert.equal(shown.code, 3);
  assert.equal(shown.json.reason, err.message);
});

processTest("a daemon that holds the store but does not answer: after the start budget the shim names it", async (t) => {
  const { agent, home, spawn } = await world(t, { connector: "process" });
  await agent.initialize();
  const pid = await waitForDaemonPid(home.dir);
  // The daemon keeps running and keeps the lock; nothing answers at the socket's path any more.
  rmSync(join(home.dir, "run", "daemon.sock"));
  const next = spawn();
  const err = await within(
    20_000,
    "initialize answered",
    next.initialize().then(
      () => undefined,
      (e: { code: number; message: string; data: any }) => e,
    ),
  );
  assert.ok(err, "initialize must fail");
  assert.equal(err.code, -32001);
  assert.match(err.message, new RegExp(`^a daemon \\(pid ${pid}\\) holds the store at .* but does not answer`));
  const shown = status({ REASONIX_HOME: home.dir });
  assert.equal(shown.code, 3);
  assert.match(shown.json.reason, new RegExp(`^a daemon \\(pid ${pid}\\) holds the store`));
});
