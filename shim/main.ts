/**
 * The `reasonix` command. Each subcommand is loaded on demand, so `reasonix acp` pulls in nothing
 * of the daemon and starts fast.
 */
const [command, ...rest] = process.argv.slice(2);

const USAGE = `usage: reasonix <command>

  acp [--model REF]        run as an ACP agent on stdio (what an editor launches)
  daemon run|start [--listen 127.0.0.1:PORT] | stop | status | logs [-f]
  setup [--api-key-env NAME] [--base-url URL] [--model REF] [--provider NAME]
  sessions [--cwd DIR]     list stored sessions
  --version
`;

async function main(): Promise<void> {
  switch (command) {
    case "acp":
      return (await import("./acp.js")).runAcp(rest);
    case "daemon": {
      const [sub, ...args] = rest;
      // `--listen HOST:PORT` opens the loopback TCP listener (token-guarded) beside the socket.
      const at = args.findIndex((a) => a === "--listen" || a.startsWith("--listen="));
      if (at >= 0) process.env.REASONIX_LISTEN = args[at]!.includes("=") ? args[at]!.split("=")[1] : args[at + 1];
      if (sub === "run") return (await import("../daemon/main.js")).runDaemon();
      return (await import("./daemon-ctl.js")).daemonCommand(sub, args);
    }
    case "setup":
      return (await import("./setup.js")).runSetup(rest);
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
  process.stderr.write(`reasonix: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
