/**
 * The build identity shim and daemon compare, so an upgraded install does not keep talking to a
 * daemon still running the old code. `npm run build` writes a fresh id to dist/build.json; reading
 * it costs the shim a fraction of a millisecond.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PACKAGE_VERSION } from "./wire.js";

/**
 * The install's root, found by walking up from this module: the same answer from dist/shared/ and
 * from the single-file shim bundle in dist/.
 */
function findRoot(from: string): string {
  let dir = from;
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "bin", "reasonix.js"))) return dir;
    dir = dirname(dir);
  }
  return dirname(dirname(from));
}

export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
export const BUILD_FILE = join(PACKAGE_ROOT, "dist", "build.json");
export const BIN_PATH = join(PACKAGE_ROOT, "bin", "reasonix.js");

export function currentBuild(env: NodeJS.ProcessEnv = process.env): string {
  // Tests stand in for an upgrade by naming a build; nothing else sets this.
  if (env.REASONIX_BUILD_ID) return env.REASONIX_BUILD_ID;
  try {
    const parsed = JSON.parse(readFileSync(BUILD_FILE, "utf8")) as { build?: unknown };
    if (typeof parsed.build === "string") return parsed.build;
  } catch {
    // a checkout that was never built through `npm run build`: the version alone
  }
  return PACKAGE_VERSION;
}
