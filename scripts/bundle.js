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
 *
 * The two SDKs every daemon comes to load are each bundled alone (`VENDOR`), from the one module of
 * ours that names what the daemon takes of them; the daemon's bundle requires that file on first
 * use. Loaded from their packages' files, they cost the first model request some 60 ms and the
 * first MCP server some 240 ms of resolving, reading and compiling; one file each, a fraction.
 */
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { LOADED_ON_USE, nativeBinding, ownMetaUrl } from "./esbuild-plugins.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");

/** Each module's own file, found from the bundle beside dist/ (esbuild-plugins.js). */
const metaUrl = ownMetaUrl({
  file: (path) => `__rx_file(${JSON.stringify(relative(DIST, path))})`,
  url: (path) => `__rx_url(${JSON.stringify(relative(DIST, path))})`,
});

/** Our module (under dist/) → its bundle (under dist/), required by the daemon's bundle on first use. */
const VENDOR = {
  "daemon/provider/openai-sdk.js": "vendor/openai.cjs",
  "daemon/mcp/sdk.js": "vendor/mcp-sdk.cjs",
};

/** In the daemon's bundle, an import of a `VENDOR` module becomes a require of its bundle. */
const vendored = {
  name: "vendored",
  setup(b) {
    // Only imports naming one of those files' names are looked at; the table decides.
    const names = Object.keys(VENDOR).map((entry) => entry.split("/").at(-1).replaceAll(".", "\\."));
    b.onResolve({ filter: new RegExp(`/(${names.join("|")})$`) }, (args) => {
      const bundle = VENDOR[relative(DIST, join(args.resolveDir, args.path)).split(sep).join("/")];
      return bundle ? { path: `./${bundle}`, external: true } : undefined;
    });
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
  // The maps name their sources without copying them: every file they name is installed beside the
  // bundle (dist/ and node_modules), and the copies were most of the package (a 5.6 MB map).
  sourcemap: "linked",
  sourcesContent: false,
  banner: {
    js: 'const __rx_file = (p) => require("node:path").join(__dirname, p), __rx_url = (p) => require("node:url").pathToFileURL(__rx_file(p)).href;',
  },
  plugins: [metaUrl],
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
    plugins: [metaUrl, nativeBinding("classic-level/binding.js"), vendored],
    // fastify's schema compilers are never built (server/app.ts gives it stand-ins): not bundled.
    external: [...LOADED_ON_USE, "@fastify/ajv-compiler", "@fastify/fast-json-stringify-compiler"],
  }),
  ...Object.entries(VENDOR).map(([entry, bundle]) =>
    build({ ...common, entryPoints: [join(DIST, entry)], outfile: join(DIST, bundle), supported: { "dynamic-import": false } }),
  ),
]);
