/**
 * The tools that follow a background job started by `run_command` with `background: true`: read its
 * new output, wait for it, stop it. They touch only the session's own jobs, so they ask nothing.
 */
import { z } from "zod";
import { errorText } from "../../../shared/error-text.js";
import type { JobRead } from "../types.js";
import { defineTool } from "../types.js";
import { failure, textContent } from "./common.js";

const MAX_WAIT_S = 600;
const DEFAULT_WAIT_S = 30;

const jobId = z.string().min(1).describe('The job\'s id, as run_command returned it ("job-1").');

function stateLine(r: JobRead): string {
  if (r.state === "running") return `Job ${r.jobId} is running (pid ${r.pid ?? "unknown"}).`;
  return r.exitCode !== null ? `Job ${r.jobId} exited with code ${r.exitCode}.` : `Job ${r.jobId} was ended by signal ${r.signal ?? "unknown"}.`;
}

function report(r: JobRead, first: string = stateLine(r)): string {
  // trimEnd, not /\s+$/: that pattern retries from every blank of a long run that does not end the text.
  const out = r.output.trimEnd();
  const lines = [first];
  if (r.dropped > 0) lines.push(`[${r.dropped} earlier bytes of output were dropped unread]`);
  lines.push(out ? `New output:\n${out}` : "(no new output)");
  return lines.join("\n");
}

function result(text: string, r: JobRead, failed = false) {
  const rawOutput = { jobId: r.jobId, state: r.state, exitCode: r.exitCode, signal: r.signal };
  return failed ? { output: text, content: [textContent(text)], rawOutput, failed } : { output: text, content: [textContent(text)], rawOutput };
}

export const commandOutputTool = defineTool({
  name: "command_output",
  description: "Read a background job's output since the last read (at most its last 32 KiB), and whether it still runs.",
  args: z.object({ jobId }),
  kind: "read",
  title: (a) => `Output of ${a.jobId}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    try {
      const r = ctx.jobs.read(a.jobId);
      return result(report(r), r);
    } catch (err) {
      return failure(errorText(err));
    }
  },
});

export const commandWaitTool = defineTool({
  name: "command_wait",
  description: "Wait until a background job exits or the time is up, then return its new output and state.",
  args: z.object({
    jobId,
    timeoutSeconds: z
      .number()
      .positive()
      .max(MAX_WAIT_S)
      .optional()
      .describe(`How long to wait at most (default ${DEFAULT_WAIT_S}, at most ${MAX_WAIT_S}); the job keeps running after.`),
  }),
  kind: "execute",
  title: (a) => `Wait for ${a.jobId}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    try {
      const seconds = a.timeoutSeconds ?? DEFAULT_WAIT_S;
      const r = await ctx.jobs.wait(a.jobId, seconds * 1000, ctx.signal);
      const first = r.timedOut
        ? `Job ${r.jobId} is still running after ${seconds} s.`
        : ctx.signal.aborted
          ? "Cancelled; the job keeps running."
          : stateLine(r);
      return result(report(r, first), r, ctx.signal.aborted);
    } catch (err) {
      return failure(errorText(err));
    }
  },
});

export const commandKillTool = defineTool({
  name: "command_kill",
  description: "Stop a background job and everything it started (its process group), and return its last output.",
  args: z.object({ jobId }),
  kind: "execute",
  title: (a) => `Stop ${a.jobId}`,
  access: () => ({ type: "none" }),
  async run(a, ctx) {
    try {
      const running = ctx.jobs.list().find((j) => j.jobId === a.jobId)?.state === "running";
      const r = await ctx.jobs.kill(a.jobId);
      return result(report(r, running ? `Job ${r.jobId} was stopped.` : `${stateLine(r)} (it had already ended)`), r);
    } catch (err) {
      return failure(errorText(err));
    }
  },
});
