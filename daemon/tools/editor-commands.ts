/**
 * Foreground commands in the editor's terminal when it offered `terminal`: create, wait (raced with
 * the timeout and cancel), output, and always release, killing first when it still runs.
 */
import { CreateTerminalResponse, TerminalOutputResponse, WaitForExitResponse } from "../../shared/acp-schemas.js";
import type { CommandResult, CommandRunner, EditorPicker } from "./types.js";

const OUTPUT_LIMIT = 64 * 1024;

export function routedCommands(sessionId: string, pick: EditorPicker, local: CommandRunner): CommandRunner {
  return {
    async run(command, opts) {
      const editor = pick("terminal");
      if (!editor) return local.run(command, opts);
      const created = CreateTerminalResponse.parse(
        await editor.request("terminal/create", {
          sessionId,
          command: "/bin/sh",
          args: ["-c", command],
          cwd: opts.cwd,
          outputByteLimit: OUTPUT_LIMIT,
        }),
      );
      const terminalId = created.terminalId;
      opts.onTerminal?.(terminalId);
      const call = (method: string): Promise<unknown> => editor.request(method, { sessionId, terminalId }, { timeoutMs: 30_000 });
      let timedOut = false;
      let cancelled = false;
      try {
        const exit = await new Promise<{ exitCode?: number | null; signal?: string | null } | undefined>((resolve, reject) => {
          const timer = setTimeout(() => {
            timedOut = true;
            resolve(undefined);
          }, opts.timeoutMs);
          const onAbort = (): void => {
            cancelled = true;
            resolve(undefined);
          };
          if (opts.signal.aborted) onAbort();
          opts.signal.addEventListener("abort", onAbort, { once: true });
          editor
            .request("terminal/wait_for_exit", { sessionId, terminalId })
            .then((r) => resolve(WaitForExitResponse.parse(r)), reject)
            .finally(() => {
              clearTimeout(timer);
              opts.signal.removeEventListener("abort", onAbort);
            });
        });
        if (!exit) await call("terminal/kill").catch(() => undefined);
        const out = TerminalOutputResponse.parse(await call("terminal/output"));
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
      }
    },
  };
}
