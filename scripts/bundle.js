/**
 * `npm run build`, after tsc: the two entry points a user waits on, each bundled with what it
 * imports into one CommonJS file. Node 20 starts a CommonJS file faster than an ES module graph
 * (no ES module loader, no per-file resolution), and one file is read and compiled once.
 *
 * - dist/shim-acp.cjs from dist/shim/acp-main.js: `reasonix acp`, what an editor launches.
 *   bin/reasonix.js runs both through a V8 code cache (bin/code-cache.js).
 * - dist/daemon-run.cjs from dist/daemon/run-main.js: `reasonix daemon run`, what a cold start waits on.
 *
 * Packages loaded on first use (the openai SDK, the MCP SDK, the shell parser, the encoding
 * detector, prom-client) stay outside: bundled, their text would be read and parsed at every start.
 * classic-level is a native addon: only the file that finds its binary stays outside.
 */
import { readFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");

/**
 * Each of our modules keeps its own `import.meta.url` (the file tsc wrote, beside the bundle), so
 * `new URL("./x-worker.js", import.meta.url)` names the same file bundled or not. Where the code
 * only turns it back into a path, the path is given as it is: the round trip through a URL was
 * most of a millisecond of every start.
 */
const ownMetaUrl = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\/dist\/(daemon|shim|shared)\/.*\.js$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      const rel = JSON.stringify(relative(DIST, args.path));
      const contents = text.replaceAll("fileURLToPath(import.meta.url)", `__rx_file(${rel})`).replaceAll("import.meta.url", `__rx_url(${rel})`);
      return { contents, loader: "js", resolveDir: dirname(args.path) };
    });
  },
};

/**
 * classic-level's JavaScript is bundled; its binding.js stays outside: it finds the native addon
 * from its own folder (node-gyp-build(__dirname)).
 */
const nativeBinding = {
  name: "native-binding",
  setup(b) {
    b.onResolve({ filter: /^\.\/binding(\.js)?$/ }, (args) =>
      /[\\/]classic-level[\\/]/.test(args.importer) ? { path: "classic-level/binding.js", external: true } : undefined,
    );
  },
};

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  logLevel: "warning",
  // Whitespace and comments out: the text is held in memory for the daemon's life, and parsed at
  // each start. Names are kept for stack traces; the source map is written beside it.
  minifyWhitespace: true,
  minifySyntax: true,
  // ASCII only: V8 holds a file with one non-ASCII character as two bytes per character.
  charset: "ascii",
  legalComments: "external",
  sourcemap: "linked",
  banner: {
    js: 'const __rx_file = (p) => require("node:path").join(__dirname, p), __rx_url = (p) => require("node:url").pathToFileURL(__rx_file(p)).href;',
  },
  plugins: [ownMetaUrl],
};

await Promise.all([
  build({
    ...common,
    entryPoints: [join(DIST, "shim", "acp-main.js")],
    outfile: join(DIST, "shim-acp.cjs"),
    // Run through the code cache too (bin/reasonix.js): no import(), as below.
    supported: { "dynamic-import": false },
  }),
  build({
    ...common,
    entryPoints: [join(DIST, "daemon", "run-main.js")],
    outfile: join(DIST, "daemon-run.cjs"),
    // import() becomes require(): bin/code-cache.js runs this file through vm.Script, where an
    // import() in code that came from the code cache fails once the GC has run (Node 20).
    supported: { "dynamic-import": false },
    plugins: [ownMetaUrl, nativeBinding],
    external: ["openai", "@modelcontextprotocol/sdk", "web-tree-sitter", "tree-sitter-bash", "prom-client", "chardet", "iconv-lite", "turndown"],
  }),
]);
