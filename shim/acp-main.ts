/**
 * Entry of the `reasonix acp` hot path. The build bundles it with everything it imports into one
 * file (dist/shim-acp.cjs, CommonJS): on these machines each extra ES module costs the start ~3 ms, and the
 * editor waits for every one of them.
 */
import { runAcp } from "./acp.js";
import { errorText } from "../shared/error-text.js";

// A client that closed our stderr gets no diagnostics; a write it cannot take must not crash us.
process.stderr.on("error", () => undefined);

runAcp(process.argv.slice(3)).catch((err: unknown) => {
  process.stderr.write(`reasonix acp: ${errorText(err)}\n`);
  process.exit(1);
});
