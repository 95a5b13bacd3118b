/**
 * Entry of the `reasonix acp` hot path: the shim's unit (acp.ts) wired to stdio and the daemon's Unix
 * socket. The build bundles it with everything it imports into one file (dist/shim-acp.cjs,
 * CommonJS): on these machines each extra ES module costs the start ~3 ms, and the editor waits for
 * every one of them.
 */
import { reportUsage, type UsageError } from "../shared/cli.js";
import { errorText } from "../shared/error-text.js";
import { resolvePaths } from "../shared/paths.js";
import { parseAcpArgs, runAcp } from "./acp.js";
import { takeUmask, unixDaemon } from "./connect.js";

// A client that closed our stderr gets no diagnostics; a write it cannot take must not crash us. The
// stream is opened on first use, or once the start is done (while the daemon answers): opening it
// cost the start about half a millisecond.
let stderrGuarded = false;
function stderr(): NodeJS.WriteStream {
  if (!stderrGuarded) {
    stderrGuarded = true;
    process.stderr.on("error", () => undefined);
  }
  return process.stderr;
}
setImmediate(stderr);

let model: string | undefined;
try {
  model = parseAcpArgs(process.argv.slice(3)).model;
} catch (err) {
  reportUsage("acp", err as UsageError);
  process.exit(2);
}
try {
  // The editor's umask goes with the window (a rejoin sends the same); our own files stay private.
  const umask = takeUmask();
  const run = runAcp({
    input: process.stdin,
    output: process.stdout,
    stderr: (text) => stderr().write(text),
    daemon: unixDaemon(resolvePaths(), { model, umask }),
  });
  void run.exited.then((code) => process.exit(code));
} catch (err) {
  stderr().write(`reasonix acp: ${errorText(err)}\n`);
  process.exit(1);
}
