// Loads one CommonJS bundle through V8's code cache, kept beside it as `<bundle>.cache`. Node 20 has
// no module.enableCompileCache (22.1+); this is its equivalent for a single file: the second start
// reads the compiled code instead of compiling some 2 MB of JavaScript again. V8 checks the cache
// against the source, its own version and its flags, and rejects one that does not match; the start
// then compiles as usual and a new cache is written. Where the install folder is not writable
// (a system-wide install), there is no cache and nothing else changes.
"use strict";
const { closeSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } = require("node:fs");
const { createRequire, wrap } = require("node:module");
const { dirname } = require("node:path");
const { Script } = require("node:vm");

const CHUNK = 64 * 1024;

/**
 * The module's text inside Node's CommonJS wrapper, as one string made once (the text is held for
 * the process's life). Read in pieces below glibc's mmap threshold: one freed multi-megabyte buffer
 * raises malloc's trim threshold for the rest of the process, and some 8 MB that the start freed
 * would then stay resident. The bundles are ASCII (scripts/bundle.js): each piece decodes alone.
 */
function readWrapped(file) {
  const [head, tail] = wrap("\0").split("\0");
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.allocUnsafeSlow(CHUNK);
    const parts = [head];
    for (let n; (n = readSync(fd, buf, 0, CHUNK, null)) > 0; ) parts.push(buf.latin1Slice(0, n));
    parts.push(tail);
    return parts.join("");
  } finally {
    closeSync(fd);
  }
}

/**
 * Runs `file` as a CommonJS module and returns its exports, with `saveCache()`: call it once the
 * program has done what it starts for, so the cache holds the functions the start compiled too
 * (it writes nothing when the cache it started from was good).
 */
function loadCached(file) {
  const cacheFile = `${file}.cache`;
  // V8 compares a cache with its source by length only: the cache also names the very file it was
  // made from (inode, size, time), so a bundle replaced in place never runs another's code.
  const { ino, size, mtimeMs } = statSync(file);
  const stamp = Buffer.from(`reasonix-code-cache ${ino} ${size} ${mtimeMs}\n`);
  let cachedData;
  try {
    const saved = readFileSync(cacheFile);
    cachedData = saved.subarray(0, stamp.length).equals(stamp) ? saved.subarray(stamp.length) : Buffer.alloc(0);
  } catch {
    // none yet
  }
  // No import() in such a file (the build turns it into require): Node 20 loses the loader of code
  // that came from a code cache once the GC has run.
  const script = new Script(readWrapped(file), { filename: file, cachedData });
  const mod = { exports: {}, filename: file, id: file, loaded: false };
  script.runInThisContext().call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  mod.loaded = true;
  const cache = cachedData === undefined ? "none" : script.cachedDataRejected ? "rejected" : "used";
  return {
    exports: mod.exports,
    /** "used", "rejected" (another node, other flags, another file) or "none" */
    cache,
    saveCache() {
      if (cache === "used") return;
      const tmp = `${cacheFile}.${process.pid}.tmp`;
      try {
        const fd = openSync(tmp, "w");
        try {
          writeSync(fd, stamp);
          writeSync(fd, script.createCachedData());
        } finally {
          closeSync(fd);
        }
        renameSync(tmp, cacheFile);
      } catch {
        // a read-only install: no cache, the start compiles as before
        rmSync(tmp, { force: true });
      }
    },
  };
}

module.exports = { loadCached };
