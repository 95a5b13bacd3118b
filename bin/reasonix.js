#!/usr/bin/env node
// Entry point kept tiny. `acp` is what editors launch and wait on, and `daemon run` is what a cold
// start waits on: each runs from a single-file bundle (scripts/bundle.js) through its V8 code cache
// (code-cache.js); every other subcommand loads its modules on demand. This file and those bundles are CommonJS (bin/package.json): Node 20
// starts a CommonJS entry faster than an ES module one, since the ES module loader is then never set
// up on these paths.
const [command, sub] = process.argv.slice(2);
if (command === "acp") {
  // Compiled from the code cache: the shim's functions were a few milliseconds of each warm start.
  // A start without a (good) cache writes one as the window ends, off the editor's path.
  const shim = require("./code-cache.js").loadCached(require("node:path").join(__dirname, "..", "dist", "shim-acp.cjs"));
  process.once("exit", shim.saveCache);
} else if (command === "daemon" && sub === "run") {
  const daemon = require("./code-cache.js").loadCached(require("node:path").join(__dirname, "..", "dist", "daemon-run.cjs"));
  // Written a moment after the start, off the path of the first window's answer.
  void daemon.exports.main().then(() => setTimeout(daemon.saveCache, 3000).unref());
} else import("../dist/shim/main.js");
