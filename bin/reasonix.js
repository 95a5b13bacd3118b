#!/usr/bin/env node
// Entry point kept tiny: the shim decides which subcommand to load.
import "../dist/shim/main.js";
