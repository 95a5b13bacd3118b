/**
 * Command-line flags through node's own `util.parseArgs`, strict: an unknown or mistyped flag is an
 * error that names it and shows the command's usage, never silently ignored.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { errorText } from "./error-text.js";

export class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

type Options = NonNullable<ParseArgsConfig["options"]>;

export function parseFlags<O extends Options>(args: string[], options: O, usage: string, opts: { positionals?: number } = {}) {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: (opts.positionals ?? 0) > 0 });
    if (parsed.positionals.length > (opts.positionals ?? 0)) {
      throw new UsageError(`unexpected argument "${parsed.positionals[opts.positionals ?? 0]}"`, usage);
    }
    return parsed;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // parseArgs words its errors well ("Unknown option '--modle'"); the usage says what is known.
    throw new UsageError(errorText(err).replace(/\. To specify a positional argument.*$/s, ""), usage);
  }
}

/** Prints a usage error the way every subcommand does, and sets exit status 2. */
export function reportUsage(command: string, err: UsageError): void {
  process.stderr.write(`reasonix ${command}: ${err.message}\n${err.usage}`);
  process.exitCode = 2;
}
