/**
 * Foreground commands in the editor's terminal when it offered `terminal`: create, wait (raced with
 * the timeout and cancel), output, and always release, killing first when it still runs. Every
 * request has a bound: create follows cancel too; wait_for_exit lasts exactly as long as the
 * command may, then is withdrawn; kill, output and release run even after a cancel. A window that
 * let one of its terminal requests time out lately (editor-silence.ts) is not used: the command
 * runs here, confined as it would be here. A confined command that did not exit on its own is also
 * swept by the daemon (run-sweep.ts): an editor's kill that lands in bwrap's first milliseconds,
 * group or pid, leaves the sandbox running on.
 */
import { CreateTerminalResponse, TerminalOutputResponse, WaitForExitResponse } from "../../shared/acp-schemas.js";
import { askEditor, editorAnswer } from "./editor-request.js";
import { newRunId, sweepRun } from "./run-sweep.js";
import type { CommandResult, CommandRunner, EditorPicker } from "./types.js";
import { shellCommand } from "./umask.js";

const OUTPUT_LIMIT = 64 * 1024;
/** The terminal requests with the editor's bound (wait_for_exit lasts as long as the command). */
const BOUNDED = ["terminal/create", "terminal/output", "terminal/kill", "terminal/release"];

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The command line and environment for an editor's terminal, so that the command sees the session's
 * environment as it would here: the editor starts a terminal with its own environment, secrets
 * included (its window's, as the shim sent it), and adds what `env` lists. What the editor has and
 * the session does not (a key the session's filter left out) is unset: by bwrap's `--unsetenv` in a
 * sandbox, else by `/usr/bin/env -u` in front. Only names go on the command line; the values sent are
 * the session's, which came from the user's own window.
 */
export function terminalCommand(
  line: { file: string; args: string[] },
  sandboxed: boolean,
  editorEnv: Environment,
  sessionEnv: Environment,
): { command: string; args: string[]; env: Array<{ name: string; value: string }> } {
  const unset = Object.keys(editorEnv)
    .filter((name) => editorEnv[name] !== undefined && sessionEnv[name] === undefined)
    .sort();
  const env = Object.entries(sessionEnv).flatMap(([name, value]) => (value === undefined ? [] : [{ name, value }]));
  if (unset.length === 0) return { command: line.file, args: line.args, env };
  if (sandboxed) return { command: line.file, args: [...unset.flatMap((name) => ["--unsetenv", name]), ...line.args], env };
  return { command: "/usr/bin/env", args: [...unset.flatMap((name) => ["-u", name]), line.file, ...line.args], env };
}

/**
 * `timeoutMs` (the daemon's editorTimeoutSeconds) bounds the requests an editor answers at once (all
 * but wait_for_exit). `env`: the session's environment, the only one its commands get (terminalCommand).
 */
export function routedCommands(sessionId: string, pick: EditorPicker, local: CommandRunner, timeoutMs: number, env: Environment): CommandRunner {
  return {
    async run(command, opts) {
      const editor = pick("terminal");
      if (!editor || BOUNDED.some((m) => editor.silence?.silent(m))) return local.run(command, opts);
      // As on this machine: confined the same way (`bwrap … -- /bin/sh …`), and with the session's
      // umask, not the terminal's window's (which may not be the window that created the session).
      let runId = opts.sandbox ? newRunId() : undefined;
      // Once is enough: after a sweep nothing of the run is left to start anything.
      const sweep = async (): Promise<void> => {
        const id = runId;
        runId = undefined;
        if (id) await sweepRun(id);
      };
      const shell = shellCommand(command, opts.cwd, opts.umask, opts.sandbox, { newSession: true, runId });
      const line = terminalCommand(shell, opts.sandbox !== undefined, editor.env ?? {}, env);
      let terminalId: string;
      try {
        const answer = await askEditor(
          editor,
          "terminal/create",
          { sessionId, ...line, cwd: opts.cwd, outputByteLimit: OUTPUT_LIMIT },
          { signal: opts.signal, timeoutMs },
        );
        terminalId = editorAnswer(CreateTerminalResponse, "terminal/create", answer).terminalId;
      } catch (err) {
        // Withdrawn (cancel, bound) or unusable: the editor may have started it all the same, and nobody would release it.
        await sweep();
        throw err;
      }
      opts.onTerminal?.(terminalId);
      const call = (method: string): Promise<unknown> => askEditor(editor, method, { sessionId, terminalId }, { timeoutMs });
      let timedOut = false;
      let cancelled = false;
      let exited = false;
      // Withdrawn when the command's time is up or the turn is cancelled, so no answer is awaited for ever.
      const waiting = new AbortController();
      try {
        const exit = await new Promise<{ exitCode?: number | null | undefined; signal?: string | null | undefined } | undefined>((resolve, reject) => {
          const stop = (): void => {
            clearTimeout(timer);
            opts.signal.removeEventListener("abort", onAbort);
            waiting.abort();
          };
          const timer = setTimeout(() => {
            timedOut = true;
            stop();
            resolve(undefined);
          }, opts.timeoutMs);
          const onAbort = (): void => {
            cancelled = true;
            stop();
            resolve(undefined);
          };
          if (opts.signal.aborted) onAbort();
          else opts.signal.addEventListener("abort", onAbort, { once: true });
          editor.request("terminal/wait_for_exit", { sessionId, terminalId }, { signal: waiting.signal }).then(
            (r) => {
              stop();
              try {
                resolve(editorAnswer(WaitForExitResponse, "terminal/wait_for_exit", r));
              } catch (err) {
                reject(err);
              }
            },
            (err: unknown) => {
              stop();
              reject(err);
            },
          );
        });
        // Ended by a signal (the user killed the terminal in the editor, say) counts as killed.
        exited = typeof exit?.exitCode === "number";
        if (!exit) {
          await call("terminal/kill").catch(() => undefined);
          await sweep();
        }
        const out = editorAnswer(TerminalOutputResponse, "terminal/output", await call("terminal/output"));
        const result: CommandResult = {
          exitCode: exit?.exitCode ?? out.exitStatus?.exitCode ?? null,
          signal: exit?.signal ?? out.exitStatus?.signal ?? null,
          output: out.output,
          truncated: out.truncated,
          timedOut,
          cancelled,
          terminalId,
        };
        return result;
      } finally {
        await call("terminal/release").catch(() => undefined);
        // Killed by anyone, or a failed wait or output (the editor's release kills): it may have been early.
        if (!exited) await sweep();
      }
    },
  };
}
