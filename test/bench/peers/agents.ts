/**
 * The peers: published ACP agents installed into a scratch folder this benchmark creates, each with
 * what it needs to start and, where it can, to take a session and a prompt turn against the
 * scripted model (Codex speaks the Responses API; the scripted model serves it too).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PeerSpec {
  name: string;
  pkg: string;
  bin: string;
  /** Environment and files for one start, in a fresh home; `model` is the scripted server's URL. */
  prepare(home: string, model: string): Record<string, string>;
  /** The ACP method an editor calls before session/new, when the agent needs one. */
  authenticate?: string;
  /** The agent's prompt turn goes to the scripted model. */
  promptable: boolean;
  /** What the peer needs that this benchmark cannot give it, said beside its failure. */
  needs?: string;
}

export const PEERS: PeerSpec[] = [
  {
    name: "claude-agent-acp 0.49.0",
    pkg: "@agentclientprotocol/claude-agent-acp@0.49.0",
    bin: "claude-agent-acp",
    prepare: (home) => ({ HOME: home, CLAUDE_CONFIG_DIR: join(home, ".claude") }),
    promptable: false,
    needs:
      'sessions need a Claude account: without one its CLI answers "Not logged in · Please run /login" and exits 1; it cannot use an OpenAI-compatible endpoint',
  },
  {
    name: "codex-acp",
    pkg: "@agentclientprotocol/codex-acp",
    bin: "codex-acp",
    prepare: (home, model) => {
      const codexHome = join(home, "codex");
      mkdirSync(codexHome, { recursive: true });
      // A custom model provider: Codex's own way to use any OpenAI-compatible (Responses) endpoint.
      writeFileSync(
        join(codexHome, "config.toml"),
        `model = "scripted"\nmodel_provider = "scripted"\n[model_providers.scripted]\nname = "scripted"\nbase_url = "${model}/v1"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n`,
      );
      return { HOME: home, CODEX_HOME: codexHome, SCRIPTED_API_KEY: "sk-scripted", OPENAI_API_KEY: "sk-scripted" };
    },
    authenticate: "api-key",
    promptable: true,
  },
];

export interface Installed {
  spec: PeerSpec;
  path?: string;
  version?: string;
  problem?: string;
}

/** Installs every peer into `dir` (created if missing); a peer that fails says why. */
export async function installPeers(dir: string): Promise<Installed[]> {
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, "package.json"))) writeFileSync(join(dir, "package.json"), '{"private":true}\n');
  const out: Installed[] = [];
  for (const spec of PEERS) {
    try {
      await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", spec.pkg], { cwd: dir, timeout: 300_000 });
      const path = join(dir, "node_modules", ".bin", spec.bin);
      if (!existsSync(path)) throw new Error(`the package has no ${spec.bin} command`);
      const pkgName = spec.pkg.replace(/@[^@/]*$/, "");
      const { version } = (await import(join(dir, "node_modules", pkgName, "package.json"), { with: { type: "json" } })).default as { version: string };
      out.push({ spec, path, version });
    } catch (err) {
      out.push({
        spec,
        problem: `npm install failed: ${String((err as Error).message)
          .split("\n")
          .slice(0, 3)
          .join(" ")}`,
      });
    }
  }
  return out;
}
