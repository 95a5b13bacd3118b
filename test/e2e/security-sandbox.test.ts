/**
 * Least authority for commands (issue 22): an approved command runs in the OS sandbox, where the
 * daemon, other sessions, their processes, the Reasonix home and the socket are out of reach; where
 * no sandbox can be made the user is told, and commands ask and grant as before.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, TEST_API_KEY, waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import { FakeEditor } from "../support/editor.js";
import { daemonStatus, daemonStatusCommand, world, within, processTest } from "./fixture.js";

const toolResults = (body: any): Record<string, string> =>
  Object.fromEntries(
    body.messages.filter((m: { role: string }) => m.role === "tool").map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content]),
  );

/** One command that goes after everything of the daemon's and of the other windows a process could reach. */
const PROBE = [
  "echo '== every environment'; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>&1",
  "echo '== parent'; tr '\\0' '\\n' < /proc/$PPID/environ 2>&1",
  "echo '== processes'; for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done 2>&1",
  'echo "== home"; ls -laR "$REASONIX_HOME" 2>&1 | head -100; cat "$REASONIX_HOME"/db/* 2>&1 | tr -c "[:print:]\\n" " " | head -c 200000',
  `echo "== sessions"; ${process.execPath} ${BIN} sessions 2>&1`,
  `echo "== socket"; ${process.execPath} -e "require('http').get({socketPath: process.env.REASONIX_HOME + '/run/daemon.sock', path: '/status'}, (r) => r.pipe(process.stdout)).on('error', (e) => console.log(e.message))"`,
  "echo '== done'",
].join("\n");

processTest(
  "two windows: B's approved command reaches no key, no secret of A, nothing of A's transcript and not A's session id; an ordinary write in the same turn works",
  async (t) => {
    const secretA = "A-SECRET-7f3e1c";
    const secretB = "B-SECRET-91d2aa";
    const transcriptA = "A-TRANSCRIPT-c0ffee";
    const { agent: a, model, workdir, home, spawn } = await world(t, { connector: "process", env: { AWS_SECRET_ACCESS_KEY: secretA, GITHUB_TOKEN: secretA } });
    await a.initialize();
    const sandbox = (await daemonStatus(home.dir)).sandbox;
    if (!sandbox.available) return t.skip(`no sandbox here: ${sandbox.reason}`);
    const { sessionId: sessionA } = await a.newSession(workdir);
    // A's session has a transcript and a job running with A's (filtered) environment.
    model.enqueue(
      { toolCalls: [{ id: "a-job", name: "run_command", arguments: { command: "sleep 60.41", background: true } }] },
      { content: [`noted ${transcriptA}`] },
    );
    assert.equal((await within(10_000, "A's turn", a.prompt(sessionA, `remember ${transcriptA}`))).stopReason, "end_turn");

    const workB = realpathSync(mkdtempSync(join(workdir, "..", "rx-ws-b-")));
    t.after(() => rmSync(workB, { recursive: true, force: true }));
    const b = spawn({ env: { AWS_SECRET_ACCESS_KEY: secretB, NPM_TOKEN: secretB } });
    await b.initialize();
    const { sessionId: sessionB } = await b.newSession(workB);
    model.enqueue(
      { toolCalls: [{ id: "probe", name: "run_command", arguments: { command: PROBE } }] },
      { toolCalls: [{ id: "write", name: "run_command", arguments: { command: "echo written-by-b > b.txt && cat b.txt" } }] },
      { content: ["done"] },
    );
    assert.equal((await within(30_000, "B's turn", b.prompt(sessionB, "look around"))).stopReason, "end_turn");
    assert.equal(b.agentRequests.filter((r) => r.method === "session/request_permission").length, 2, "each command asked once");
    const results = toolResults(model.requests.at(-1)!.body);
    const probe = results.probe!;
    const shown = JSON.stringify(b.updatesFor(sessionB));
    for (const section of ["== every environment", "== parent", "== processes", "== home", "== sessions", "== socket", "== done"])
      assert.ok(probe.includes(section), `the probe ran: ${section}`);
    assert.ok(!probe.includes("bytes omitted"), "the whole output is here to be checked");
    for (const [what, value] of [
      ["the provider key", TEST_API_KEY],
      ["window A's secret", secretA],
      ["window B's own secret", secretB],
      ["A's transcript", transcriptA],
      ["A's session id", sessionA],
    ] as const) {
      assert.ok(!probe.includes(value), `${what} reached B's command:\n${probe}`);
      assert.ok(!shown.includes(value), `${what} reached B's window`);
    }
    assert.ok(!probe.includes("sleep 60.41"), "A's job is not even visible");
    assert.match(results.write!, /^Exit code: 0\nOutput:\nwritten-by-b/);
    assert.equal(readFileSync(join(workB, "b.txt"), "utf8"), "written-by-b\n");

    // The probe is not blind: run unconfined (danger-full-access), the same reads find A's secret (its
    // output is then far too long to keep whole, so the finds are picked out of it).
    await b.rpc.request("session/set_config_option", { sessionId: sessionB, configId: "tool_approval", value: "danger-full-access" });
    const picked = `(${PROBE}) | grep -a -o -e 'A-SECRET-[0-9a-f]*' -e 'sleep 60.41' | sort -u`;
    model.enqueue({ toolCalls: [{ id: "probe-open", name: "run_command", arguments: { command: picked } }] }, { content: ["done"] });
    await within(30_000, "the unconfined probe", b.prompt(sessionB, "look again"));
    const open = toolResults(model.requests.at(-1)!.body)["probe-open"]!;
    assert.ok(open.includes(secretA), "unconfined, A's window environment is readable (A's shim process)");
    assert.ok(open.includes("sleep 60.41"), "unconfined, A's job is visible");
  },
);

processTest("a killed daemon's sandboxed commands leave their /tmp in the daemon's own folder, and the next start removes it", async (t) => {
  const { agent, model, workdir, home, spawn } = await world(t, { connector: "process" });
  await agent.initialize();
  const sandbox = (await daemonStatus(home.dir)).sandbox;
  if (!sandbox.available) return t.skip(`no sandbox here: ${sandbox.reason}`);
  const { sessionId } = await agent.newSession(workdir);
  // A job keeps the session live once its window is gone, so the daemon is killed with it running.
  const command = "echo scratch-41c7 > /tmp/scratch.txt; sleep 60.73";
  model.enqueue({ toolCalls: [{ id: "job", name: "run_command", arguments: { command, background: true } }] }, { content: ["started"] });
  assert.equal((await within(15_000, "the turn", agent.prompt(sessionId, "start it"))).stopReason, "end_turn");
  // With REASONIX_HOME set the home is the state folder: the command's /tmp is a folder in it.
  const tmpRoot = join(home.dir, "sandbox-tmp");
  const written = (f: string) => existsSync(f) && readFileSync(f, "utf8") === "scratch-41c7\n";
  const scratch = () => (existsSync(tmpRoot) ? readdirSync(tmpRoot).map((d) => join(tmpRoot, d, "scratch.txt")) : []).filter(written);
  for (let i = 0; i < 250 && scratch().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(scratch().length, 1, "one private /tmp, in the daemon's folder");
  const [file] = scratch();
  await agent.closeStdin();
  for (let i = 0; i < 250 && (await daemonStatus(home.dir)).liveSessions.find((s: any) => s.sessionId === sessionId)?.attachments !== 0; i++)
    await new Promise((r) => setTimeout(r, 20));

  // The daemon dies without stopping its sessions: nothing of it removes the folder.
  const pid = await waitForDaemonPid(home.dir);
  process.kill(pid, "SIGKILL");
  assert.ok(await waitForPidExit(pid, 10_000), "the daemon is gone");
  assert.ok(existsSync(file!), "left behind by the killed daemon");
  // The next window starts a daemon, which holds the home's lock and empties the folder.
  const next = spawn();
  await next.initialize();
  assert.equal(existsSync(file!), false, "the killed daemon's /tmp is gone");
});

processTest("the daemon a window starts holds no key, token or secret in its process environment", async (t) => {
  const { agent, home } = await world(t, {
    connector: "process",
    env: { AWS_SECRET_ACCESS_KEY: "daemon-env-canary", GITHUB_TOKEN: "daemon-env-canary", SOME_PASSWORD: "daemon-env-canary" },
  });
  await agent.initialize();
  const pid = await waitForDaemonPid(home.dir);
  const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  const names = environ.map((e) => e.slice(0, e.indexOf("=")));
  assert.ok(!environ.some((e) => e.includes("daemon-env-canary") || e.includes(TEST_API_KEY)), names.join(" "));
  assert.ok(!names.some((n) => /KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL/i.test(n)), names.join(" "));
  assert.ok(names.includes("PATH") && names.includes("REASONIX_HOME"), "what it needs is still there");
  // And the window's key still reaches the provider: it came over the socket.
  const { sessionId } = await agent.newSession(home.dir);
  assert.ok(sessionId);
});

test("a command the sandbox stopped says so; the retry outside the sandbox asks every time (no grant covers it) and runs only once allowed", async (t) => {
  const { agent, model, workdir, home } = await world(t);
  const outside = realpathSync(mkdtempSync("/var/tmp/rx-outside-"));
  t.after(() => rmSync(outside, { recursive: true, force: true }));
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const write = `echo escaped > ${outside}/out.txt`;
  const asked: any[] = [];
  agent.onPermission = (params) => {
    asked.push(params);
    const pick =
      params.options.find((o: { optionId: string }) => o.optionId === "allow_always") ??
      params.options.find((o: { optionId: string }) => o.optionId === "allow_once_unsandboxed");
    return { outcome: { outcome: "selected", optionId: pick.optionId } };
  };
  model.enqueue(
    { toolCalls: [{ id: "first", name: "run_command", arguments: { command: write } }] },
    { toolCalls: [{ id: "retry", name: "run_command", arguments: { command: write, outsideSandbox: true } }] },
    { content: ["done"] },
  );
  await within(20_000, "the turn", agent.prompt(sessionId, "write it"));
  const results = toolResults(model.requests.at(-1)!.body);
  if (/NO SANDBOX/.test(JSON.stringify(asked)) || !/Read-only file system/.test(results.first!)) {
    const status = (await daemonStatus(home.dir)).sandbox;
    if (!status.available) return t.skip(`no sandbox here: ${status.reason}`);
  }
  assert.match(results.first!, /Read-only file system/);
  assert.match(results.first!, /\[sandbox\] This command ran in the bubblewrap sandbox \(workspace-write\).*outsideSandbox: true/s);
  assert.equal(asked.length, 2, "the retry asked although `always` was granted for the command");
  assert.deepEqual(
    asked[1].options.map((o: { optionId: string }) => o.optionId),
    ["allow_once_unsandboxed", "reject_once"],
  );
  assert.match(asked[1].toolCall.title, /outside the sandbox/);
  assert.match(results.retry!, /^Exit code: 0/);
  assert.equal(readFileSync(join(outside, "out.txt"), "utf8"), "escaped\n");

  // Rejected, it does not run; and the always-grant still covers the confined command without a question.
  rmSync(join(outside, "out.txt"));
  agent.onPermission = (params) => {
    asked.push(params);
    return { outcome: { outcome: "selected", optionId: "reject_once" } };
  };
  model.enqueue(
    { toolCalls: [{ id: "again", name: "run_command", arguments: { command: write, outsideSandbox: true } }] },
    { toolCalls: [{ id: "confined", name: "run_command", arguments: { command: write } }] },
    { content: ["done"] },
  );
  await within(20_000, "the second turn", agent.prompt(sessionId, "again"));
  const second = toolResults(model.requests.at(-1)!.body);
  assert.match(second.again!, /rejected running it outside the sandbox/);
  assert.match(second.confined!, /Read-only file system/);
  assert.equal(asked.length, 3);
  assert.equal(existsSync(join(outside, "out.txt")), false);
});

test("in the editor's terminal the command is wrapped in the same sandbox: the editor runs bwrap, and .git stays read-only", async (t) => {
  const { agent, model, workdir, home } = await world(t, { clientCapabilities: { terminal: true } });
  await agent.initialize();
  const status = (await daemonStatus(home.dir)).sandbox;
  if (!status.available) return t.skip(`no sandbox here: ${status.reason}`);
  mkdirSync(join(workdir, ".git"));
  writeFileSync(join(workdir, ".git", "config"), "[core]\n");
  const editor = new FakeEditor();
  editor.attach(agent);
  const { sessionId } = await agent.newSession(workdir);
  model.enqueue(
    {
      toolCalls: [
        { id: "t", name: "run_command", arguments: { command: "echo hi > ok.txt; echo x >> .git/config || echo git-refused; ls /proc | grep -c '^[0-9]'" } },
      ],
    },
    { content: ["done"] },
  );
  await within(20_000, "the turn", agent.prompt(sessionId, "run"));
  const create = editor.calls.find((c) => c.method === "terminal/create")!;
  assert.equal(create.params.command, status.bwrap);
  assert.ok(create.params.args.includes("--unshare-pid") && create.params.args.includes("--new-session"));
  assert.deepEqual(create.params.args.slice(-3), ["/bin/sh", "-c", "echo hi > ok.txt; echo x >> .git/config || echo git-refused; ls /proc | grep -c '^[0-9]'"]);
  assert.equal(readFileSync(join(workdir, "ok.txt"), "utf8"), "hi\n");
  assert.equal(readFileSync(join(workdir, ".git", "config"), "utf8"), "[core]\n");
  const out = toolResults(model.requests.at(-1)!.body).t!;
  assert.match(out, /git-refused/);
});

test("bubblewrap missing: the session says so once and why, /status and `reasonix daemon status` say so, and commands ask and grant as before", async (t) => {
  // The daemon looks for bwrap on its own PATH: one without it is a machine without bubblewrap.
  const bare = realpathSync(mkdtempSync(join(process.env.TMPDIR ?? "/tmp", "rx-path-")));
  t.after(() => rmSync(bare, { recursive: true, force: true }));
  const { agent, model, workdir, home } = await world(t, { env: { PATH: bare } });
  await agent.initialize();
  const { sessionId } = await agent.newSession(workdir);
  const notice = await agent.waitForUpdate(
    (u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk" && /sandbox/i.test(u.update.content.text),
  );
  assert.match(notice.update.content.text, /bubblewrap is not installed.*apt install bubblewrap/s);
  const status = await daemonStatusCommand(home.dir);
  assert.equal(status.sandbox.available, false);
  assert.match(status.sandbox.reason, /bubblewrap is not installed/);
  await agent.prompt(sessionId, "/status");
  assert.match(agent.textOf(sessionId), /- Commands: unconfined, NO SANDBOX: bubblewrap is not installed/);

  let asked = 0;
  agent.onPermission = (params) => {
    asked++;
    return { outcome: { outcome: "selected", optionId: params.options.find((o: { optionId: string }) => o.optionId === "allow_always").optionId } };
  };
  model.enqueue(
    { toolCalls: [{ id: "one", name: "run_command", arguments: { command: "/bin/echo unconfined > made.txt" } }] },
    { toolCalls: [{ id: "two", name: "run_command", arguments: { command: "/bin/echo unconfined > made.txt" } }] },
    { content: ["done"] },
  );
  await within(20_000, "the turn", agent.prompt(sessionId, "run twice"));
  assert.equal(asked, 1, "asked once; the always-grant covered the second run");
  assert.equal(readFileSync(join(workdir, "made.txt"), "utf8"), "unconfined\n");
  const texts = agent.updatesFor(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk" && /^\[notice\].*sandbox/i.test(u.content.text));
  assert.equal(texts.length, 1, "the notice was given once");
});

test("sandbox.network false in config.json: a command cannot reach a server on this machine, and /status says so; the default can", async (t) => {
  // Exits on the answer: Node's global agent keeps the socket alive, and the command would wait the
  // model server's idle timeout (5 s) before exiting.
  const connect = (url: string) =>
    `${process.execPath} -e "require('http').get('${url}/v1/models', (r) => { console.log('reached', r.statusCode); process.exit(0); }).on('error', (e) => console.log('refused', e.code))"`;
  for (const network of [false, true]) {
    const { agent, model, workdir, home } = await world(t, {
      prepare: (dir) => writeFileSync(join(dir, "config.json"), JSON.stringify(network ? {} : { sandbox: { network: false } })),
    });
    await agent.initialize();
    if (!(await daemonStatus(home.dir)).sandbox.available) return t.skip("no sandbox here");
    assert.equal((await daemonStatus(home.dir)).sandbox.network, network);
    const { sessionId } = await agent.newSession(workdir);
    model.enqueue({ toolCalls: [{ id: "net", name: "run_command", arguments: { command: connect(model.url) } }] }, { content: ["done"] });
    await within(20_000, "the turn", agent.prompt(sessionId, "reach the model"));
    const out = toolResults(model.requests.at(-1)!.body).net!;
    assert.match(out, network ? /reached \d+/ : /refused ECONNREFUSED/, out);
    await agent.prompt(sessionId, "/status");
    assert.match(
      agent.textOf(sessionId),
      network ? /- Commands: in a bubblewrap sandbox \(workspace-write\).*network on/ : /- Commands: in a bubblewrap sandbox \(workspace-write\).*no network/,
    );
  }
});
