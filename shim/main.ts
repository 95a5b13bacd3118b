/**
 * The `reasonix` command. Each subcommand is loaded on demand, so `reasonix acp` pulls in nothing
 * of the daemon and starts fast.
 */
import { parseFlags, reportUsage, UsageError } from "../shared/cli.js";
import { errorText } from "../shared/error-text.js";

const [command, ...rest] = process.argv.slice(2);

const USAGE = `usage: reasonix <command>

  acp [--model REF]        run as an ACP agent on stdio (what an editor launches)
  daemon run|start [--listen 127.0.0.1:PORT] | stop | status | logs [-f]
  setup [--api-key-env NAME] [--base-url URL] [--model REF] [--provider NAME]
  chat [--cwd DIR] [--model REF] [-p PROMPT]   talk to a new session from this terminal (or a pipe)
  attach SESSION           join a session another window runs: watch, prompt, steer, cancel
  sessions [--cwd DIR]     list stored sessions
  sessions prune [--older-than 30d] [--empty] [--cwd DIR] [--dry-run]   remove sessions nobody uses
  --version
`;

async function main(): Promise<void> {
  switch (command) {
    case "acp":
      // bin/reasonix.js runs the bundle of acp-main.ts; this is the same entry, unbundled.
      await import("./acp-main.js");
      return;
    case "daemon": {
      const [sub, ...args] = rest;
      // bin/reasonix.js runs the bundle of run-main.ts; this is the same entry, unbundled.
      if (sub === "run") return (await import("../daemon/run-main.js")).daemonRun(args);
      const usage = "usage: reasonix daemon run|start [--listen 127.0.0.1:PORT] | stop | status | logs [-f]\n";
      const flags =
        sub === "start"
          ? parseFlags(args, { listen: { type: "string" } }, usage).values
          : sub === "logs"
            ? parseFlags(args, { follow: { type: "boolean", short: "f" } }, usage).values
            : parseFlags(args, {}, usage).values;
      // `--listen HOST:PORT` opens the loopback TCP listener (token-guarded) beside the socket.
      if ("listen" in flags && typeof flags.listen === "string") process.env.REASONIX_LISTEN = flags.listen;
      return (await import("./daemon-ctl.js")).daemonCommand(sub, "follow" in flags && flags.follow === true);
    }
    case "setup":
      return (await import("./setup.js")).runSetup(rest);
    case "chat":
      return (await import("./chat.js")).runChat(rest);
    case "attach": {
      const [session, ...more] = rest;
      if (!session || session.startsWith("-")) {
        process.stderr.write("usage: reasonix attach SESSION\n");
        process.exitCode = 2;
        return;
      }
      return (await import("./chat.js")).runChat(more, session);
    }
    case "sessions":
      return (await import("./sessions.js")).listSessionsCommand(rest);
    case "--version":
    case "-v":
    case "version": {
      const { PACKAGE_VERSION } = await import("../shared/wire.js");
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return;
    }
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stderr.write(USAGE);
      process.exitCode = command === undefined ? 2 : 0;
      return;
    default:
      process.stderr.write(`reasonix: unknown command "${command}"\n${USAGE}`);
      process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  if (err instanceof UsageError) {
    reportUsage(command ?? "", err);
    return;
  }
  process.stderr.write(`reasonix: ${errorText(err)}\n`);
  process.exit(1);
});
