/**
 * `reasonix setup`: records a provider in config.json and its key in credentials.json (0600).
 * Interactive on a terminal (the ACP terminal auth method runs it there); flags for scripts.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { resolvePaths } from "../shared/paths.js";
import { parseFlags } from "../shared/cli.js";
import { parseConfigText, type ConfigFile, DEEPSEEK_DEFAULT_BASE_URL, DEEPSEEK_MODELS } from "../daemon/config/config.js";
import { errorText } from "../shared/error-text.js";

export const SETUP_USAGE = `usage: reasonix setup [--provider NAME] [--base-url URL] [--models a,b] [--api-key-env NAME]
                      [--model provider/model] [--api-key KEY | --no-key] [--no-check]
`;

type KeyCheck = { kind: "accepted"; models: number } | { kind: "refused"; detail: string } | { kind: "unchecked"; detail: string };

/** Asks the provider's models endpoint whether it takes the key: a wrong key is caught now, not in a turn. */
async function checkKey(baseUrl: string, key: string): Promise<KeyCheck> {
  const url = `${baseUrl.replace(/\/+$/, "")}/models`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(8000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { kind: "unchecked", detail: `could not reach ${url} (${cause?.code ?? cause?.message ?? errorText(err)})` };
  }
  const text = await res.text().catch(() => "");
  if (res.status === 401 || res.status === 403) {
    let message = "";
    try {
      message = String((JSON.parse(text) as { error?: { message?: unknown } }).error?.message ?? "");
    } catch {
      message = "";
    }
    return { kind: "refused", detail: `HTTP ${res.status}${message ? `: ${message.replaceAll(key, "[key]")}` : ""}` };
  }
  if (!res.ok) return { kind: "unchecked", detail: `${url} answered HTTP ${res.status}` };
  try {
    const data = (JSON.parse(text) as { data?: unknown[] }).data;
    return { kind: "accepted", models: Array.isArray(data) ? data.length : 0 };
  } catch {
    return { kind: "unchecked", detail: `${url} did not answer with JSON` };
  }
}

function writeJson(path: string, value: unknown): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
}

async function readKey(interactive: boolean, envName: string): Promise<string> {
  if (interactive) {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const key = await rl.question(`API key for ${envName} (leave empty to use the environment variable): `);
    rl.close();
    return key.trim();
  }
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text.trim();
}

export async function runSetup(args: string[]): Promise<void> {
  const { values } = parseFlags(
    args,
    {
      provider: { type: "string" },
      "base-url": { type: "string" },
      models: { type: "string" },
      "api-key-env": { type: "string" },
      model: { type: "string" },
      "api-key": { type: "string" },
      "no-key": { type: "boolean" },
      "no-check": { type: "boolean" },
    },
    SETUP_USAGE,
  );
  process.umask(0o077);
  const paths = resolvePaths();
  mkdirSync(paths.configDir, { recursive: true, mode: 0o700 });
  let current: ConfigFile = {};
  try {
    current = parseConfigText(readFileSync(paths.configFile, "utf8"), paths.configFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }

  const provider = values.provider ?? "deepseek";
  const isDeepSeek = provider === "deepseek";
  const baseUrl = values["base-url"] ?? (isDeepSeek ? DEEPSEEK_DEFAULT_BASE_URL : undefined);
  const apiKeyEnv = values["api-key-env"] ?? (isDeepSeek ? "DEEPSEEK_API_KEY" : `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`);
  const models = values.models?.split(",").filter(Boolean) ?? (isDeepSeek ? DEEPSEEK_MODELS : undefined);
  if (!baseUrl || !models) {
    process.stderr.write("reasonix setup: a provider other than deepseek needs --base-url URL and --models a,b\n");
    process.exitCode = 2;
    return;
  }
  const providers = (current.providers ?? []).filter((p) => p.name !== provider);
  providers.push({ name: provider, baseUrl, apiKeyEnv, models });
  const next: ConfigFile = { ...current, providers };
  const model = values.model;
  if (model) next.model = model;
  // Validate with the daemon's own schema before writing anything.
  parseConfigText(JSON.stringify(next), "the new configuration");

  const noKey = values["no-key"] === true;
  const interactive = process.stdin.isTTY === true && !noKey;
  const key = noKey ? "" : (values["api-key"] ?? (await readKey(interactive, apiKeyEnv)));
  const checked = key || process.env[apiKeyEnv];
  if (checked && values["no-check"] !== true) {
    const verdict = await checkKey(baseUrl, checked);
    if (verdict.kind === "refused") {
      process.stderr.write(`reasonix setup: the provider at ${baseUrl} refused the key (${verdict.detail}); nothing was saved\n`);
      process.exitCode = 1;
      return;
    }
    process.stderr.write(
      verdict.kind === "accepted"
        ? `reasonix setup: the key works (${verdict.models} models at ${baseUrl})\n`
        : `reasonix setup: the key was not checked: ${verdict.detail}\n`,
    );
  }
  writeJson(paths.configFile, next);
  if (key) {
    let creds: Record<string, string> = {};
    try {
      creds = JSON.parse(readFileSync(paths.credentialsFile, "utf8")) as Record<string, string>;
    } catch {
      creds = {};
    }
    creds[apiKeyEnv] = key;
    writeJson(paths.credentialsFile, creds);
  }
  process.stderr.write(
    `reasonix setup: provider "${provider}" (${baseUrl}) saved to ${paths.configFile}` +
      (key ? `; key stored in ${paths.credentialsFile}` : `; the key is read from $${apiKeyEnv}`) +
      "\n",
  );
}
