/**
 * Model references ("provider/model") and credentials. Keys come from the environment the session
 * was opened with, then the daemon's own, then the credentials file written by `reasonix setup`;
 * they live in memory only.
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

export interface Endpoint {
  baseUrl: string;
  apiKey: string;
}

/** `env` is the window's environment; `daemonEnv` the daemon's own, asked second. */
export function resolveEndpoint(
  choice: ModelChoice,
  env: Record<string, string | undefined>,
  credentialsFile: string,
  daemonEnv: Record<string, string | undefined> = process.env,
): Endpoint {
  const keyName = choice.provider.apiKeyEnv;
  const apiKey = env[keyName] || daemonEnv[keyName] || readCredentialsFile(credentialsFile)[keyName];
  if (!apiKey) {
    throw RpcError.authRequired(`No API key for provider "${choice.provider.name}": set ${keyName} in the editor's environment or run \`reasonix setup\`.`);
  }
  const envBase = choice.provider.name === "deepseek" ? env.DEEPSEEK_BASE_URL || daemonEnv.DEEPSEEK_BASE_URL : undefined;
  return { baseUrl: envBase || choice.provider.baseUrl, apiKey };
}
