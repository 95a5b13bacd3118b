#!/usr/bin/env node
// Entry point kept tiny. `acp` is what editors launch and wait on, so it runs from a single-file
// bundle of the shim; every other subcommand loads its modules on demand.
if (process.argv[2] === "acp") await import("../dist/shim-acp.js");
else await import("../dist/shim/main.js");
