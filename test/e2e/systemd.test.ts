/**
 * The systemd units and socket activation. The units are checked with systemd-analyze; the daemon
 * is started the way systemd starts it from reasonix.socket: the listening socket on fd 3,
 * LISTEN_FDS=1 and LISTEN_PID naming the daemon's own pid.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { AgentProcess, BIN, makeHome, REPO_ROOT, waitForDaemonPid, waitForPidExit } from "../support/harness.js";
import { DAEMON_NODE_FLAGS } from "../../shim/connect.js";
import { processTest } from "./fixture.js";

const run = promisify(execFile);

test("both units pass systemd-analyze verify", async (t) => {
  const found = spawnSync("systemd-analyze", ["--version"], { stdio: "ignore" });
  if (found.error || found.status !== 0) return t.skip("systemd-analyze is not installed here (Debian: apt-get install systemd)");
  const dir = join(REPO_ROOT, "systemd");
  const { stderr } = await run("systemd-analyze", ["verify", join(dir, "reasonix.service"), join(dir, "reasonix.socket")], { cwd: dir });
  assert.equal(stderr.trim(), "", "no warnings");
});

test("the service starts the daemon with the Node flags a window's shim starts it with", () => {
  const unit = readFileSync(join(REPO_ROOT, "systemd", "reasonix.service"), "utf8");
  const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1]?.split(" ") ?? [];
  const node = execStart.indexOf("node");
  assert.deepEqual(execStart.slice(node + 1, node + 1 + DAEMON_NODE_FLAGS.length), DAEMON_NODE_FLAGS);
  assert.match(execStart[node + 1 + DAEMON_NODE_FLAGS.length] ?? "", /bin\/reasonix\.js$/);
});

processTest(
  "a socket passed the way systemd passes it (LISTEN_FDS) is served as it is: the first connection reaches the daemon, and the socket outlives its stop",
  async (t) => {
    // No window may start a daemon of its own before the passed socket is served: the home comes first.
    const home = await makeHome();
    t.after(() => home.cleanup());
    const workdir = realpathSync(mkdtempSync(join(tmpdir(), "rx-ws-")));
    t.after(() => rmSync(workdir, { recursive: true, force: true }));
    const runDir = join(home.dir, "run");
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    const socketPath = join(runDir, "daemon.sock");
    // What systemd does for reasonix.socket: bind and listen, then hand the socket to the service.
    const server: Server = await new Promise((resolve) => {
      const s = createServer().listen(socketPath, () => resolve(s));
    });
    const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
    const daemon = spawn("/bin/sh", ["-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" "$@"', process.execPath, BIN, "daemon", "run"], {
      env: { ...process.env, REASONIX_HOME: home.dir, REASONIX_READY_FD: "" },
      stdio: ["ignore", "ignore", "ignore", fd],
    });
    t.after(() => daemon.kill("SIGKILL"));
    // Our copy of the socket stops accepting; closing a Unix server removes its path, so keep a link.
    linkSync(socketPath, `${socketPath}.keep`);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    renameSync(`${socketPath}.keep`, socketPath);

    const pid = await waitForDaemonPid(home.dir);
    assert.equal(pid, daemon.pid, "the daemon that took the passed socket is the one serving");
    const agent = AgentProcess.spawn({ home: home.dir, cwd: workdir });
    t.after(() => agent.kill("SIGKILL"));
    assert.equal((await agent.initialize()).protocolVersion, 1);
    assert.ok((await agent.newSession(workdir)).sessionId);
    await agent.closeStdin();
    agent.assertCleanWire();
    await run(process.execPath, [BIN, "daemon", "stop"], { env: { ...process.env, REASONIX_HOME: home.dir } });
    assert.equal(await waitForPidExit(pid, 10_000), true);
    assert.ok(existsSync(socketPath), "systemd's socket is left where it is");
  },
);
