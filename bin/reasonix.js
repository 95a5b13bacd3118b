#!/usr/bin/env node
// Entry point kept tiny. `acp` is what editors launch and wait on, so it runs from a single-file
// bundle of the shim; every other subcommand loads its modules on demand. This file and that
// bundle are CommonJS (bin/package.json): Node 20 starts a CommonJS entry faster than an ES module
// one, since the ES module loader is then never set up on the editor's path.
if (process.argv[2] === "acp") require("../dist/shim-acp.cjs");
else import("../dist/shim/main.js");
