/**
 * Model references ("provider/model") and credentials. Keys come from the environment the session
 * was opened with, then the daemon's own, then the `env` file in the config folder (what the
 * systemd unit documents), then the credentials file written by `reasonix setup`. The files are
 * read when a model is made and the keys live in memory only: never in the daemon's process
 * environment, where anything running as the user could read them.
 */
import { readFileSync } from "node:fs";
import { RpcError } from "../../shared/jsonrpc.js";
import type { DaemonConfig, ProviderConfig } from "../config/config.js";

export interface ModelChoice {
  ref: string;
  provider: ProviderConfig;
  model: string;
}

export function listModels(config: DaemonConfig): ModelChoice[] {
  return config.providers.flatMap((provider) => provider.models.map((model) => ({ ref: `${provider.name}/${model}`, provider, model })));
}

/** Accepts "provider/model", a bare model id, or a provider name (its first model). */
export function resolveModelRef(config: DaemonConfig, ref: string): ModelChoice | undefined {
  const all = listModels(config);
  return (
    all.find((m) => m.ref === ref) ??
    all.find((m) => m.model === ref) ??
    all.find((m) => m.provider.name === ref) ??
    // "deepseek-pro" style short names: provider prefix + the model's last word
    all.find((m) => `${m.provider.name}-${m.model.split("-").at(-1)}` === ref)
  );
}

export function readCredentialsFile(path: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
    }
  } catch {
    // A missing or broken credentials file means "no stored key"; the prompt error says what to do.
  }
  return {};
}

/**
 * `NAME=value` lines (systemd's EnvironmentFile form: `#` comments, an optional `export `, values
 * optionally in matching quotes). Unreadable or missing means no keys from it.
 */
export function readEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const name = line
      .slice(0, eq)
      .replace(/^export\s+/, "")
      .trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) value = value.slice(1, -1);
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) out[name] = value;
  }
  return out;
}

/** Where a key not in the window's environment may come from, in this order. */
export interface KeySources {
  /** The daemon's own environment (in tests, the creating program's). */
  daemonEnv: Readonly<Record<string, string | undefined>>;
  envFile: string;
  credentialsFile: string;
}

export interface Endpoint {
  baseUrl: string;
  apiKey: string;
}

/** `env` is the window's environment, asked first. */
export function resolveEndpoint(choice: ModelChoice, env: Readonly<Record<string, string | undefined>>, sources: KeySources): Endpoint {
  const keyName = choice.provider.apiKeyEnv;
  const { daemonEnv } = sources;
  const apiKey = env[keyName] || daemonEnv[keyName] || readEnvFile(sources.envFile)[keyName] || readCredentialsFile(sources.credentialsFile)[keyName];
  if (!apiKey) {
    throw RpcError.authRequired(`No API key for provider "${choice.provider.name}": set ${keyName} in the editor's environment or run \`reasonix setup\`.`);
  }
  const envBase = choice.provider.name === "deepseek" ? env.DEEPSEEK_BASE_URL || daemonEnv.DEEPSEEK_BASE_URL : undefined;
  return { baseUrl: envBase || choice.provider.baseUrl, apiKey };
}
