/**
 * The esbuild plugins both bundlers share (bundle.js for what users run, bundle-tests.js for the
 * test files): our modules keep the `import.meta.url` of the file tsc wrote, and classic-level's
 * native binding is found from its own folder.
 */
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Replaces `import.meta.url` in each of our compiled modules (`dist/{daemon,shim,shared,test}/…`)
 * with `code.url(path)`, code naming that module's own file, so `new URL("./x-worker.js",
 * import.meta.url)` names the same file bundled or not. Where the code only turns it back into a
 * path, `code.file(path)` gives the path as it is: the round trip through a URL was most of a
 * millisecond of every start.
 */
export function ownMetaUrl(code, folders = "daemon|shim|shared") {
  const filter = new RegExp(`/dist/(${folders})/.*\\.js$`);
  return {
    name: "own-import-meta-url",
    setup(b) {
      b.onLoad({ filter }, async (args) => {
        const text = await readFile(args.path, "utf8");
        const contents = text.replaceAll("fileURLToPath(import.meta.url)", code.file(args.path)).replaceAll("import.meta.url", code.url(args.path));
        return { contents, loader: "js", resolveDir: dirname(args.path) };
      });
    },
  };
}

/** classic-level's JavaScript is bundled; its binding.js stays outside, as `external`. */
export function nativeBinding(external) {
  return {
    name: "native-binding",
    setup(b) {
      b.onResolve({ filter: /^\.\/binding(\.js)?$/ }, (args) =>
        /[\\/]classic-level[\\/]/.test(args.importer) ? { path: external, external: true } : undefined,
      );
    },
  };
}

/** Packages loaded on first use, or that find files beside their own code: never bundled. */
export const LOADED_ON_USE = ["openai", "@modelcontextprotocol/sdk", "web-tree-sitter", "tree-sitter-bash", "prom-client", "chardet", "iconv-lite", "turndown"];
