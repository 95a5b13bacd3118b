import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pidsAfterKill } from "../../test/support/harness.js";
import { JobTable } from "./jobs.js";
import { localCommands } from "./local-commands.js";
import { sandboxOf, type SandboxSpec } from "./sandbox.js";
import { probeSandbox } from "./sandbox-probe.js";

const status = await probeSandbox(process.env.PATH);
const skip = status.available ? false : `no sandbox here: ${status.reason}`;

function spec(root: string): SandboxSpec {
  return {
    bwrap: status.available ? status.bwrap : "/usr/bin/bwrap",
    preset: "workspace-write",
    roots: [root],
    hidden: [],
    readable: [],
    tmp: undefined,
    network: false,
  };
}

/**
 * A stand-in daemon: starts one confined background job through the real JobTable, then SIGKILLs
 * itself `delay` ms later. Run as its own process, importing the modules tsc wrote.
 */
const DAEMON = `
const [jobsUrl, sandboxUrl, spec, word, delay] = process.argv.slice(1);
const { JobTable } = await import(jobsUrl);
const { sandboxOf } = await import(sandboxUrl);
const s = JSON.parse(spec);
new JobTable().start("sleep 30." + word + "; touch late", s.roots[0], { env: { PATH: process.env.PATH }, umask: 0o022, sandbox: sandboxOf(s) });
setTimeout(() => process.kill(process.pid, "SIGKILL"), Number(delay));
`;

test("a daemon killed within ms of starting a confined job takes the job with it", { skip }, async (t) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "rx-lifeline-")));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const word = `${process.pid}${Date.now() % 100_000}`;
  const urls = [new URL("./jobs.js", import.meta.url).href, new URL("./sandbox.js", import.meta.url).href];
  // Without the lifeline, 4 of 30 such kills (0–9 ms after the spawn) left the job running for ever.
  const kills = Array.from({ length: 20 }, (_, i) => i % 10);
  for (let i = 0; i < kills.length; i += 4) {
    await Promise.all(
      kills.slice(i, i + 4).map(
        (delay) =>
          new Promise<void>((resolve) => {
            const daemon = spawn(process.execPath, ["--input-type=module", "-e", DAEMON, ...urls, JSON.stringify(spec(root)), word, String(delay)], {
              stdio: "ignore",
            });
            daemon.on("exit", () => resolve());
          }),
      ),
    );
  }
  assert.deepEqual(await pidsAfterKill([`sleep 30.${word}`], 5000), [], "jobs left running by a killed daemon");
  assert.deepEqual(readdirSync(root), []);
});

test("a confined command sees no lifeline descriptor, keeps the shell's pid, and its exit status and output come back as before", { skip }, async (t) => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "rx-lifeline-")));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const run = await localCommands({ PATH: process.env.PATH }).run('echo "pid $$"; [ -e /proc/self/fd/3 ] && echo "fd 3 open" || echo "fd 3 closed"; exit 7', {
    cwd: root,
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    umask: 0o022,
    sandbox: sandboxOf(spec(root)),
  });
  assert.equal(run.exitCode, 7);
  assert.deepEqual(run.output.trim().split("\n"), ["pid 2", "fd 3 closed"], "the sandbox's first process after its init, as without the lifeline");
  const jobs = new JobTable();
  t.after(() => jobs.killAll());
  const job = jobs.start("echo done", root, { env: { PATH: process.env.PATH }, umask: 0o022, sandbox: sandboxOf(spec(root)) });
  const read = await jobs.wait(job.jobId, 10_000, new AbortController().signal);
  assert.deepEqual([read.state, read.exitCode, read.output], ["exited", 0, "done\n"]);
});
