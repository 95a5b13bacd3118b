/**
 * config.json (DESIGN §3 "Configuration"): every key optional, unknown keys refused with a message
 * that names them. Environment variables override the file where both exist.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";

export const ProviderConfig = z
  .object({
    name: z.string().min(1).regex(/^[A-Za-z0-9._-]+$/, "provider names use letters, digits, '.', '_' and '-'"),
    baseUrl: z.string().url(),
    apiKeyEnv: z.string().min(1),
    models: z.array(z.string().min(1)).min(1),
    contextWindow: z.number().int().positive().optional(),
  })
  .strict();
export type ProviderConfig = z.infer<typeof ProviderConfig>;

const Price = z
  .object({
    currency: z.enum(["CNY", "USD"]),
    cacheHit: z.number().nonnegative(),
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
  })
  .strict();

export const ConfigFile = z
  .object({
    providers: z.array(ProviderConfig).optional(),
    model: z.string().min(1).optional(),
    maxSteps: z.number().int().positive().optional(),
    permissionTimeoutSeconds: z.number().int().positive().optional(),
    idleShutdownSeconds: z.number().int().nonnegative().optional(),
    searchTimeoutSeconds: z.number().int().positive().optional(),
    budgets: z
      .object({ seconds: z.number().positive(), tokens: z.number().int().positive(), cost: z.number().positive() })
      .partial()
      .strict()
      .optional(),
    listen: z.string().optional(),
    allowedOrigins: z.array(z.string().url()).optional(),
    displayCurrency: z.enum(["auto", "CNY", "USD"]).optional(),
    goal: z.object({ maxTurns: z.number().int().positive(), maxSeconds: z.number().positive() }).partial().strict().optional(),
    prices: z.record(z.string(), Price).optional(),
  })
  .strict();
export type ConfigFile = z.infer<typeof ConfigFile>;

export interface DaemonConfig {
  providers: ProviderConfig[];
  defaultModel: string;
  maxSteps: number;
  permissionTimeoutSeconds: number;
  idleShutdownSeconds: number;
  /** How long grep or glob may go without progress (a pattern stuck on one line) before it is stopped. */
  searchTimeoutSeconds: number;
  budgets: ConfigFile["budgets"];
  listen: string | undefined;
  allowedOrigins: string[];
  prices: ConfigFile["prices"];
  goal: { maxTurns: number; maxSeconds: number };
  displayCurrency: "auto" | "CNY" | "USD" | undefined;
}

export const DEEPSEEK_DEFAULT_BASE_URL = "https://api.deepseek.com";
export const DEEPSEEK_MODELS = ["deepseek-v4-flash", "deepseek-v4-pro"];

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function parseConfigText(text: string, source: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = ConfigFile.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const where = i.path.length ? i.path.join(".") : "(top level)";
      if (i.code === "unrecognized_keys") return `unknown key${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => `"${k}"`).join(", ")} at ${where}`;
      return `${where}: ${i.message}`;
    });
    throw new ConfigError(`${source}: ${issues.join("; ")}`);
  }
  return parsed.data;
}

export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`cannot read ${path}: ${(err as Error).message}`);
  }
  return parseConfigText(text, path);
}

/** REASONIX_BUDGET_TOKENS / _SECONDS / _COST override the file's per-turn budgets one by one. */
function envBudgets(env: NodeJS.ProcessEnv, file: ConfigFile["budgets"]): ConfigFile["budgets"] {
  const num = (v: string | undefined): number | undefined => (v && Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : undefined);
  const merged = { ...file };
  const tokens = num(env.REASONIX_BUDGET_TOKENS);
  const seconds = num(env.REASONIX_BUDGET_SECONDS);
  const cost = num(env.REASONIX_BUDGET_COST);
  if (tokens !== undefined) merged.tokens = tokens;
  if (seconds !== undefined) merged.seconds = seconds;
  if (cost !== undefined) merged.cost = cost;
  return Object.keys(merged).length > 0 ? merged : undefined;
}

export function resolveConfig(file: ConfigFile, env: NodeJS.ProcessEnv): DaemonConfig {
  const builtIn: ProviderConfig = {
    name: "deepseek",
    baseUrl: DEEPSEEK_DEFAULT_BASE_URL,
    apiKeyEnv: "DEEPSEEK_API_KEY",
    models: DEEPSEEK_MODELS,
  };
  const fromFile = file.providers ?? [];
  const providers = fromFile.some((p) => p.name === "deepseek") ? fromFile : [builtIn, ...fromFile];
  const num = (v: string | undefined): number | undefined => (v && /^\d+$/.test(v) ? Number(v) : undefined);
  const positive = (n: number | undefined): number | undefined => (n === undefined || n === 0 ? undefined : n);
  return {
    providers,
    defaultModel: env.REASONIX_MODEL || file.model || `${providers[0]!.name}/${providers[0]!.models[0]!}`,
    maxSteps: num(env.REASONIX_MAX_STEPS) ?? file.maxSteps ?? 50,
    permissionTimeoutSeconds: num(env.REASONIX_PERMISSION_TIMEOUT_SECONDS) ?? file.permissionTimeoutSeconds ?? 1800,
    idleShutdownSeconds: num(env.REASONIX_IDLE_SHUTDOWN_SECONDS) ?? file.idleShutdownSeconds ?? 900,
    searchTimeoutSeconds: positive(num(env.REASONIX_SEARCH_TIMEOUT_SECONDS)) ?? file.searchTimeoutSeconds ?? 10,
    budgets: envBudgets(env, file.budgets),
    listen: env.REASONIX_LISTEN || file.listen,
    allowedOrigins: file.allowedOrigins ?? [],
    prices: file.prices,
    displayCurrency: (["auto", "CNY", "USD"] as const).find((c) => c === env.REASONIX_DISPLAY_CURRENCY) ?? file.displayCurrency,
    goal: {
      maxTurns: num(env.REASONIX_GOAL_MAX_TURNS) ?? file.goal?.maxTurns ?? 20,
      maxSeconds: num(env.REASONIX_GOAL_MAX_SECONDS) ?? file.goal?.maxSeconds ?? 3600,
    },
  };
}
