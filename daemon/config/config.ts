/**
 * config.json (DESIGN §3 "Configuration"): every key optional, unknown keys refused with a message
 * that names them. Environment variables override the file where both exist.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { DURATION_HINT, parseDuration } from "../../shared/duration.js";
import { errorText } from "../../shared/error-text.js";

export interface CompactionConfig {
  auto: boolean;
  ratio: number;
  keepRatio: number;
}

export const DEFAULT_COMPACTION: CompactionConfig = { auto: true, ratio: 0.8, keepRatio: 0.25 };

export const ProviderConfig = z
  .object({
    name: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9._-]+$/, "provider names use letters, digits, '.', '_' and '-'"),
    baseUrl: z.string().url(),
    apiKeyEnv: z.string().min(1),
    models: z.array(z.string().min(1)).min(1),
    contextWindow: z.number().int().positive().optional(),
  })
  .strict();
export type ProviderConfig = z.infer<typeof ProviderConfig>;

const Duration = z.string().refine((s) => parseDuration(s) !== undefined, { message: `not a duration (${DURATION_HINT})` });

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
    permissionTimeoutSeconds: z.number().positive().optional(),
    idleShutdownSeconds: z.number().int().nonnegative().optional(),
    sessionUnloadSeconds: z.number().int().nonnegative().optional(),
    windowBacklogBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .optional(),
    logMaxBytes: z
      .number()
      .int()
      .min(64 * 1024)
      .optional(),
    logFiles: z.number().int().min(1).max(100).optional(),
    searchTimeoutSeconds: z.number().int().positive().optional(),
    mcpStartSeconds: z.number().positive().optional(),
    modelIdleTimeoutSeconds: z.number().positive().optional(),
    editorTimeoutSeconds: z.number().positive().optional(),
    modelRetry: z
      .object({ retries: z.number().int().min(0).max(20), baseSeconds: z.number().positive(), maxSeconds: z.number().positive() })
      .partial()
      .strict()
      .optional(),
    budgets: z.object({ seconds: z.number().positive(), tokens: z.number().int().positive(), cost: z.number().positive() }).partial().strict().optional(),
    listen: z.string().optional(),
    allowedOrigins: z.array(z.string().url()).optional(),
    displayCurrency: z.enum(["auto", "CNY", "USD"]).optional(),
    goal: z.object({ maxTurns: z.number().int().positive(), maxSeconds: z.number().positive() }).partial().strict().optional(),
    compaction: z
      .object({
        auto: z.boolean(),
        ratio: z.number().min(0.3).max(0.95),
        keepRatio: z.number().min(0.05).max(0.5),
      })
      .partial()
      .strict()
      .refine((c) => (c.keepRatio ?? DEFAULT_COMPACTION.keepRatio) < (c.ratio ?? DEFAULT_COMPACTION.ratio) - 0.1, {
        message: "keepRatio must stay at least 0.1 below ratio, or every compaction would start the next",
      })
      .optional(),
    subagent: z
      .object({ maxSteps: z.number().int().positive(), maxTokens: z.number().int().positive(), seconds: z.number().positive() })
      .partial()
      .strict()
      .optional(),
    prices: z.record(z.string(), Price).optional(),
    shellEnvironment: z
      .object({ include: z.array(z.string().min(1)), exclude: z.array(z.string().min(1)) })
      .partial()
      .strict()
      .optional(),
    webFetch: z.object({ allowPrivateNetwork: z.boolean() }).partial().strict().optional(),
    sandbox: z.object({ network: z.boolean() }).partial().strict().optional(),
    retention: z.object({ olderThan: Duration, empty: Duration }).partial().strict().optional(),
    detachedTurns: z.enum(["hold", "continue", "cancel"]).optional(),
  })
  .strict();
export type ConfigFile = z.infer<typeof ConfigFile>;

export interface DaemonConfig {
  providers: ProviderConfig[];
  defaultModel: string;
  maxSteps: number;
  permissionTimeoutSeconds: number;
  idleShutdownSeconds: number;
  /** A live session with no window, turn, question or queued work leaves memory after this long (0 = never). */
  sessionUnloadSeconds: number;
  /**
   * A window this far behind (bytes sent but not read) is dropped rather than letting the daemon's
   * memory grow without bound. Generous: a live stream never gets near it unless the window stopped
   * reading, and replays wait for the window instead of piling up.
   */
  windowBacklogBytes: number;
  /** daemon.log rotates at this size, keeping `logFiles` older files. */
  logMaxBytes: number;
  logFiles: number;
  /** How long grep or glob may go without progress (a pattern stuck on one line) before it is stopped. */
  searchTimeoutSeconds: number;
  /** How long a session's first turn waits for its MCP servers still starting; a later one joins the turn after it answers. */
  mcpStartSeconds: number;
  /** How long an `fs/*` or `terminal/*` request to the editor may go unanswered (not wait_for_exit). */
  editorTimeoutSeconds: number;
  /** A model stream (or a request waiting for its headers) silent this long is stopped. */
  modelIdleTimeoutSeconds: number;
  /** Tries after the first for a busy (429, 5xx) or unreachable provider, with exponential backoff. */
  modelRetry: { retries: number; baseSeconds: number; maxSeconds: number };
  budgets: ConfigFile["budgets"];
  listen: string | undefined;
  allowedOrigins: string[];
  prices: ConfigFile["prices"];
  goal: { maxTurns: number; maxSeconds: number };
  /**
   * Context compaction (agent/compaction.ts): between model rounds, once the context reaches `ratio`
   * of the model's window (always when the next request would not fit, even with `auto` off), the
   * older conversation becomes one summary and about `keepRatio` of the window stays verbatim.
   */
  compaction: CompactionConfig;
  /** The task tool's child agent: its own rounds (never more than maxSteps), tokens and seconds. */
  subagent: { maxSteps: number; maxTokens: number; seconds: number };
  displayCurrency: "auto" | "CNY" | "USD" | undefined;
  /** What a session's commands inherit of its window's environment (sessions/environment.ts). */
  shellEnvironment: { include?: string[] | undefined; exclude?: string[] | undefined };
  /** web_fetch: loopback, link-local and private addresses are refused unless this allows them. */
  webFetch: { allowPrivateNetwork: boolean };
  /**
   * The command sandbox (tools/sandbox.ts). `network`: whether sandboxed commands share the
   * machine's network (default true: servers the agent starts must be reachable from the user's
   * browser and from its other commands, and installs must work); false gives each command an
   * empty network of its own, so an approved command cannot send anything anywhere.
   */
  sandbox: { network: boolean };
  /**
   * Sessions the daemon removes on its own (sessions/retention.ts), in milliseconds of no activity:
   * `olderThanMs` any session, `emptyMs` a session nobody ever prompted. Absent: kept for ever.
   */
  retention: { olderThanMs?: number; emptyMs?: number };
  /**
   * A turn whose last window went away without cancel (agent/window-hold.ts): `hold` waits before
   * its next change or model request until a window attaches (at most permissionTimeoutSeconds,
   * then cancelled); `continue` runs on as if a window were there; `cancel` cancels it at once.
   */
  detachedTurns: DetachedTurns;
}

export type DetachedTurns = "hold" | "continue" | "cancel";

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
    throw new ConfigError(`${source} is not valid JSON: ${errorText(err)}`);
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
    throw new ConfigError(`cannot read ${path}: ${errorText(err)}`);
  }
  return parseConfigText(text, path);
}

/**
 * Environment variables that override config.json, each with the key it overrides. They go through
 * the same schema as the file, so `REASONIX_MAX_STEPS=abc` is an error naming the variable, not a
 * silently ignored value.
 */
export const ENV_OVERRIDES = {
  REASONIX_MODEL: ["model"],
  REASONIX_MAX_STEPS: ["maxSteps"],
  REASONIX_PERMISSION_TIMEOUT_SECONDS: ["permissionTimeoutSeconds"],
  REASONIX_IDLE_SHUTDOWN_SECONDS: ["idleShutdownSeconds"],
  REASONIX_SESSION_UNLOAD_SECONDS: ["sessionUnloadSeconds"],
  REASONIX_WINDOW_BACKLOG_BYTES: ["windowBacklogBytes"],
  REASONIX_SEARCH_TIMEOUT_SECONDS: ["searchTimeoutSeconds"],
  REASONIX_MCP_START_SECONDS: ["mcpStartSeconds"],
  REASONIX_MODEL_IDLE_TIMEOUT_SECONDS: ["modelIdleTimeoutSeconds"],
  REASONIX_EDITOR_TIMEOUT_SECONDS: ["editorTimeoutSeconds"],
  REASONIX_MODEL_RETRIES: ["modelRetry", "retries"],
  REASONIX_MODEL_RETRY_BASE_SECONDS: ["modelRetry", "baseSeconds"],
  REASONIX_MODEL_RETRY_MAX_SECONDS: ["modelRetry", "maxSeconds"],
  REASONIX_BUDGET_TOKENS: ["budgets", "tokens"],
  REASONIX_BUDGET_SECONDS: ["budgets", "seconds"],
  REASONIX_BUDGET_COST: ["budgets", "cost"],
  REASONIX_GOAL_MAX_TURNS: ["goal", "maxTurns"],
  REASONIX_GOAL_MAX_SECONDS: ["goal", "maxSeconds"],
  REASONIX_DISPLAY_CURRENCY: ["displayCurrency"],
  REASONIX_LISTEN: ["listen"],
  REASONIX_DETACHED_TURNS: ["detachedTurns"],
} as const satisfies Record<string, readonly [string] | readonly [string, string]>;

const NUMERIC = /^-?\d+(\.\d+)?$/;

/** config.json with the environment's overrides laid over it, validated as one. */
export function withEnvOverrides(file: ConfigFile, env: NodeJS.ProcessEnv): ConfigFile {
  const merged = structuredClone(file) as Record<string, unknown>;
  const origin = new Map<string, string>();
  for (const [name, path] of Object.entries(ENV_OVERRIDES)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    // Numbers arrive as text; anything that does not read as one is left as text for zod to refuse.
    const value = NUMERIC.test(raw.trim()) ? Number(raw) : raw;
    let target = merged;
    for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
    target[path.at(-1)!] = value;
    origin.set(path.join("."), name);
  }
  const parsed = ConfigFile.safeParse(merged);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => {
    const where = i.path.join(".");
    const variable = origin.get(where);
    return variable ? `${variable}=${JSON.stringify(env[variable])}: ${i.message} (it sets ${where})` : `config.json ${where}: ${i.message}`;
  });
  throw new ConfigError(issues.join("; "));
}

export function resolveConfig(fileConfig: ConfigFile, env: NodeJS.ProcessEnv): DaemonConfig {
  const file = withEnvOverrides(fileConfig, env);
  const builtIn: ProviderConfig = {
    name: "deepseek",
    baseUrl: DEEPSEEK_DEFAULT_BASE_URL,
    apiKeyEnv: "DEEPSEEK_API_KEY",
    models: DEEPSEEK_MODELS,
  };
  const fromFile = file.providers ?? [];
  const providers = fromFile.some((p) => p.name === "deepseek") ? fromFile : [builtIn, ...fromFile];
  return {
    providers,
    defaultModel: file.model || `${providers[0]!.name}/${providers[0]!.models[0]!}`,
    maxSteps: file.maxSteps ?? 50,
    permissionTimeoutSeconds: file.permissionTimeoutSeconds ?? 1800,
    idleShutdownSeconds: file.idleShutdownSeconds ?? 900,
    sessionUnloadSeconds: file.sessionUnloadSeconds ?? 600,
    windowBacklogBytes: file.windowBacklogBytes ?? 64 * 1024 * 1024,
    logMaxBytes: file.logMaxBytes ?? 10 * 1024 * 1024,
    logFiles: file.logFiles ?? 5,
    searchTimeoutSeconds: file.searchTimeoutSeconds ?? 10,
    mcpStartSeconds: file.mcpStartSeconds ?? 15,
    modelIdleTimeoutSeconds: file.modelIdleTimeoutSeconds ?? 120,
    editorTimeoutSeconds: file.editorTimeoutSeconds ?? 60,
    modelRetry: { retries: file.modelRetry?.retries ?? 4, baseSeconds: file.modelRetry?.baseSeconds ?? 1, maxSeconds: file.modelRetry?.maxSeconds ?? 60 },
    budgets: file.budgets && Object.keys(file.budgets).length > 0 ? file.budgets : undefined,
    listen: file.listen,
    allowedOrigins: file.allowedOrigins ?? [],
    prices: file.prices,
    shellEnvironment: file.shellEnvironment ?? {},
    webFetch: { allowPrivateNetwork: file.webFetch?.allowPrivateNetwork ?? false },
    sandbox: { network: file.sandbox?.network ?? true },
    retention: {
      ...(file.retention?.olderThan ? { olderThanMs: parseDuration(file.retention.olderThan)! } : {}),
      ...(file.retention?.empty ? { emptyMs: parseDuration(file.retention.empty)! } : {}),
    },
    detachedTurns: file.detachedTurns ?? "hold",
    displayCurrency: file.displayCurrency,
    compaction: {
      auto: file.compaction?.auto ?? DEFAULT_COMPACTION.auto,
      ratio: file.compaction?.ratio ?? DEFAULT_COMPACTION.ratio,
      keepRatio: file.compaction?.keepRatio ?? DEFAULT_COMPACTION.keepRatio,
    },
    subagent: {
      maxSteps: file.subagent?.maxSteps ?? 20,
      maxTokens: file.subagent?.maxTokens ?? 400_000,
      seconds: file.subagent?.seconds ?? 600,
    },
    goal: {
      maxTurns: file.goal?.maxTurns ?? 20,
      maxSeconds: file.goal?.maxSeconds ?? 3600,
    },
  };
}
