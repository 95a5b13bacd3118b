/**
 * Entry of `reasonix daemon run`: its flags, then `runDaemon`. The build bundles it with everything
 * it imports into one CommonJS file (dist/daemon-run.cjs) that bin/reasonix.js loads: one file to
 * read and compile instead of some 500 modules to resolve, which is most of a cold start.
 */
import { parseFlags, reportUsage, UsageError } from "../shared/cli.js";
import { errorText } from "../shared/error-text.js";
import { runDaemon } from "./main.js";

const USAGE = "usage: reasonix daemon run|start [--listen 127.0.0.1:PORT] | stop | status | logs [-f]\n";

/** `args`: what follows `daemon run`. */
export async function daemonRun(args: string[]): Promise<void> {
  const flags = parseFlags(args, { listen: { type: "string" } }, USAGE).values;
  // `--listen HOST:PORT` opens the loopback TCP listener (token-guarded) beside the socket.
  if (typeof flags.listen === "string") process.env.REASONIX_LISTEN = flags.listen;
  await runDaemon();
}

/** The bundle's start (`process.argv` is `node bin/reasonix.js daemon run …`); settles once started or refused. */
export function main(): Promise<void> {
  return daemonRun(process.argv.slice(4)).catch((err: unknown) => {
    if (err instanceof UsageError) return reportUsage("daemon", err);
    process.stderr.write(`reasonix: ${errorText(err)}\n`);
    process.exit(1);
  });
}
