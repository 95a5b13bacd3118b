import assert from "node:assert/strict";
import { test } from "node:test";
import { isRunning } from "../../shared/process.js";
import { JobTable } from "./jobs.js";

test("a job's output is read once, in order; wait returns at its exit with the code", async () => {
  const jobs = new JobTable();
  const job = jobs.start("echo one; sleep 0.2; echo two; exit 3", process.cwd(), { env: process.env, umask: 0o022 });
  assert.equal(job.jobId, "job-1");
  assert.equal(job.state, "running");
  const done = await jobs.wait("job-1", 5000, new AbortController().signal);
  assert.equal(done.timedOut, false);
  assert.equal(done.exitCode, 3);
  assert.equal(done.output, "one\ntwo\n");
  assert.equal(jobs.read("job-1").output, "");
  assert.throws(() => jobs.read("job-9"), /no background job job-9 in this session \(jobs: job-1\)/);
});

test("wait gives up at its timeout and the job runs on; kill ends the whole process group", async () => {
  const jobs = new JobTable();
  const job = jobs.start("sleep 30 & echo $! ; wait", process.cwd(), { env: process.env, umask: 0o022 });
  // Each wait gives up at 50 ms with the job running; under load the shell may print its child's
  // pid only after the first one (a fresh-clone CI run once read nothing), so wait until it has.
  let output = "";
  for (let i = 0; i < 100 && !/^\d+\n/.test(output); i++) {
    const waited = await jobs.wait(job.jobId, 50, new AbortController().signal);
    assert.equal(waited.timedOut, true);
    assert.equal(waited.state, "running");
    output += waited.output;
  }
  const grandchild = Number(output.trim());
  assert.ok(grandchild > 0 && isRunning(grandchild));
  const killed = await jobs.kill(job.jobId);
  assert.equal(killed.state, "exited");
  assert.equal(isRunning(grandchild), false);
  assert.equal(jobs.running(), 0);
});

test("unread output is bounded: the oldest bytes go and are counted", async () => {
  const jobs = new JobTable();
  jobs.start("head -c 100000 /dev/zero | tr '\\0' x", process.cwd(), { env: process.env, umask: 0o022 });
  const r = await jobs.wait("job-1", 5000, new AbortController().signal);
  assert.equal(r.output.length, 32 * 1024);
  assert.equal(r.dropped, 100000 - 32 * 1024);
});
