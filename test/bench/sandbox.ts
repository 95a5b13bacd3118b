/**
 * What the command sandbox costs: the same command through the daemon's own runner
 * (tools/local-commands.ts), unconfined and in the workspace-write sandbox a session would build
 * (its folders, a protected .git, the daemon's folders hidden, the session's /tmp), interleaved pair
 * by pair so both see the same machine. The added time is the median of the pairs' differences.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localCommands } from "../../daemon/tools/local-commands.js";
import { probeSandbox } from "../../daemon/tools/sandbox-probe.js";
import { sandboxOf, type Sandbox } from "../../daemon/tools/sandbox.js";
import { quantileOf, summarize, type Row } from "./stats.js";

const TARGET_ADDED_MS = 15;

async function timed(command: string, cwd: string, sandbox: Sandbox | undefined): Promise<number> {
  const started = performance.now();
  const r = await localCommands({ PATH: process.env.PATH ?? "/usr/bin:/bin" }).run(command, {
    cwd,
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    umask: 0o022,
    sandbox,
  });
  const ms = performance.now() - started;
  if (r.exitCode !== 0) throw new Error(`\`${command}\` failed (${sandbox ? "sandboxed" : "unconfined"}): ${r.output}`);
  return ms;
}

export async function sandboxBench(opts: { pairs: number }): Promise<{ rows: Row[]; detail: string }> {
  const status = await probeSandbox(process.env.PATH);
  if (!status.available) return { rows: [], detail: `not measured: ${status.reason}` };
  const base = realpathSync(mkdtempSync(join(tmpdir(), "rx-bench-sbx-")));
  try {
    const root = join(base, "ws");
    const home = join(base, "home");
    const tmp = join(base, "tmp");
    for (const d of [join(root, ".git"), join(root, "src"), home, tmp]) mkdirSync(d, { recursive: true });
    const sandbox = sandboxOf({ bwrap: status.bwrap, preset: "workspace-write", roots: [root], hidden: [home], readable: [], tmp, network: true });
    const rows: Row[] = [];
    const details: string[] = [];
    for (const command of ["true", "ls -la src > /dev/null && echo done > out.txt"]) {
      const plain: number[] = [];
      const boxed: number[] = [];
      const added: number[] = [];
      // Warm both paths first: the first spawn pays for loading what later ones find in the page cache.
      await timed(command, root, undefined);
      await timed(command, root, sandbox);
      for (let i = 0; i < opts.pairs; i++) {
        const first = i % 2 === 0;
        const a = await timed(command, root, first ? undefined : sandbox);
        const b = await timed(command, root, first ? sandbox : undefined);
        const [p, s] = first ? [a, b] : [b, a];
        plain.push(p);
        boxed.push(s);
        added.push(s - p);
      }
      rows.push(summarize(`command \`${command.split(" ")[0]}…\`, unconfined`, plain, undefined));
      rows.push(summarize(`command \`${command.split(" ")[0]}…\`, sandboxed`, boxed, undefined));
      rows.push(summarize(`sandbox's added time, \`${command.split(" ")[0]}…\``, added, TARGET_ADDED_MS));
      details.push(
        `\`${command}\`: median ${quantileOf(plain, 0.5).toFixed(1)} ms unconfined, ${quantileOf(boxed, 0.5).toFixed(1)} ms sandboxed, +${quantileOf(added, 0.5).toFixed(1)} ms`,
      );
    }
    return { rows, detail: `${details.join("; ")} (${opts.pairs} interleaved pairs each, ${status.bwrap})` };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
