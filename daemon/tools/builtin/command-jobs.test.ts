import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { call, fixture, type Fixture } from "../../../test/support/tool-fixture.js";
import { commandWaitTool } from "./command-jobs.js";
import { runCommandTool } from "./run-command.js";

let f: Fixture;
beforeEach(() => (f = fixture()));
afterEach(() => f.cleanup());

test("a job's output of 32 KiB of spaces before its last word comes back with only the trailing blanks trimmed", { timeout: 10_000 }, async () => {
  const started = await call(runCommandTool, { command: "printf '%32000s' x; printf ' \\n\\n'", background: true }, f.ctx);
  const jobId = /"jobId": "(job-\d+)"/.exec(started.output)![1]!;
  const r = await call(commandWaitTool, { jobId, timeoutSeconds: 5 }, f.ctx);
  assert.equal(r.output, `Job ${jobId} exited with code 0.\nNew output:\n${" ".repeat(31_999)}x`);
});
