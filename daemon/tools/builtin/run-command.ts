import { errorText } from "../../../shared/error-text.js";
import { outputTail } from "../clip.js";
import { z } from "zod";
import { defineTool, type CommandResult, type ToolContext, type ToolResult } from "../types.js";
import { isInside } from "../workspace.js";
import { sandboxStopNote } from "../sandbox.js";
import { absPath, clip, failure, shownPath, textContent } from "./common.js";

const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 600;

const args = z.object({
  command: z.string().min(1).describe('The shell command line, e.g. "npm test -- --grep parser".'),
  cwd: z.string().optional().describe("Folder to run in, inside the workspace (default: the working directory)."),
  timeoutSeconds: z
    .number()
    .positive()
    .max(MAX_TIMEOUT_S)
    .optional()
    .describe(`Stop the command after this many seconds (default ${DEFAULT_TIMEOUT_S}, at most ${MAX_TIMEOUT_S}).`),
  background: z
    .boolean()
    .optional()
    .describe("Start it as a background job and return at once with its jobId (servers, watchers, long builds); no timeout applies."),
  outsideSandbox: z.boolean().optional().describe("After the sandbox stopped this command: ask the user to run it once outside the sandbox."),
});

function report(r: CommandResult, timeoutS: number): string {
  const lines: string[] = [];
  if (r.timedOut) lines.push(`Timed out after ${timeoutS} s; the command and everything it started were stopped.`);
  else if (r.cancelled) lines.push("Cancelled by the user; the command and everything it started were stopped.");
  else if (r.exitCode !== null) lines.push(`Exit code: ${r.exitCode}`);
  else lines.push(`Killed by signal ${r.signal ?? "unknown"}`);
  // trimEnd, not /\s+$/: that pattern retries from every blank of a long run that does not end the text (1.5 s for 32 KiB).
  const output = r.output.trimEnd();
  lines.push(output ? `Output:\n${output}` : "(no output)");
  // The local runner marks the cut in the text itself; an editor terminal only sets the flag.
  if (r.truncated && !output.includes(" bytes omitted ...]")) lines.push("[output truncated]");
  return lines.join("\n");
}

export const runCommandTool = defineTool({
  name: "run_command",
  description:
    "Run a shell command (/bin/sh -c) and return its exit code and combined stdout+stderr. " +
    "Stdin is closed, so interactive prompts get end-of-file; pass flags like --yes instead. " +
    "Long output keeps only its beginning and end. Everything the command starts is stopped when it ends, " +
    `times out (default ${DEFAULT_TIMEOUT_S} s) or is cancelled. For a server or anything long-running, pass background: true: ` +
    "it returns a jobId at once; read its new output with command_output, wait with command_wait, stop it with command_kill. " +
    "Commands may run in a sandbox (outside the workspace read-only, /tmp private to the session, no other processes visible); " +
    "a result the sandbox stopped says so.",
  args,
  kind: "execute",
  title: (a, ctx) =>
    `${a.background ? "Start in the background" : "Run"} \`${clip(a.command.replace(/\s+/g, " ").trim(), 80)}\`${a.cwd ? ` in ${shownPath(ctx, a.cwd)}` : ""}`,
  access: (a, ctx) => ({ type: "execute", command: a.command, cwd: absPath(ctx, a.cwd), ...(a.outsideSandbox ? { outsideSandbox: true } : {}) }),
  async run(a, ctx) {
    const cwd = absPath(ctx, a.cwd);
    if (!isInside(cwd, ctx.roots)) {
      return failure(`cwd ${cwd} is outside the workspace (${ctx.roots.join(", ")}); commands run only inside it.`);
    }
    if (a.background) return startJob(a.command, cwd, ctx);
    const timeoutS = a.timeoutSeconds ?? DEFAULT_TIMEOUT_S;
    let r: CommandResult;
    try {
      r = await ctx.commands.run(a.command, {
        cwd,
        timeoutMs: timeoutS * 1000,
        signal: ctx.signal,
        umask: ctx.umask,
        sandbox: ctx.sandbox,
        onTerminal: (terminalId) => ctx.update({ content: [{ type: "terminal", terminalId }] }),
      });
    } catch (err) {
      return failure(`Could not run the command: ${errorText(err)}`);
    }
    const stopped = ctx.sandbox && r.exitCode !== 0 ? sandboxStopNote(ctx.sandbox, r.output) : undefined;
    const output = stopped ? `${report(r, timeoutS)}\n${stopped}` : report(r, timeoutS);
    // The output's end as text, beside the terminal when there is one: a client that renders no
    // terminal (acpx shows `[terminal] <id>`) still shows what the command printed.
    const tail = outputTail(r.output);
    const text = textContent(stopped ? `${tail.replace(/\n$/, "")}\n${stopped}` : tail);
    const content = r.terminalId ? [{ type: "terminal" as const, terminalId: r.terminalId }, text] : [text];
    const rawOutput = { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, cancelled: r.cancelled, truncated: r.truncated };
    return r.timedOut || r.cancelled ? { output, content, rawOutput, failed: true } : { output, content, rawOutput };
  },
});

/** Background jobs always run in the daemon, never in an editor terminal: they must outlive the window. */
function startJob(command: string, cwd: string, ctx: ToolContext): ToolResult {
  try {
    const job = ctx.jobs.start(command, cwd, { env: ctx.env, umask: ctx.umask, sandbox: ctx.sandbox });
    const output =
      `Started in the background: "jobId": "${job.jobId}" (pid ${job.pid ?? "unknown"}). ` +
      "Read its new output with command_output, wait for it with command_wait, stop it with command_kill.";
    return { output, content: [textContent(output)], rawOutput: { jobId: job.jobId, pid: job.pid ?? null } };
  } catch (err) {
    return failure(`Could not start the command: ${errorText(err)}`);
  }
}
