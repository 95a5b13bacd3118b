/**
 * Usage, cost and status of one session: the cumulative cost ledger (persisted with the session),
 * the running turn's own ledger (for budgets and the status object), and the `usage_update` and
 * status snapshot built from them.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { DaemonConfig } from "../config/config.js";
import { CostLedger, legacyCost, type CostQuote, type DisplayCurrency } from "../provider/pricing.js";
import type { Usage } from "../provider/types.js";

export const STATUS_UPDATE_METHOD = "_reasonix.io/session/status_update";

export type TurnOutcome = { kind: "completed" | "cancelled" | "paused" | "error" | "max_turn_requests"; reason?: string };

/** Context windows we know; a provider may state its own in config.json. */
export function contextWindow(config: DaemonConfig, modelRef: string): number {
  const [providerName] = modelRef.split("/");
  const provider = config.providers.find((p) => p.name === providerName);
  if (provider?.contextWindow) return provider.contextWindow;
  return /deepseek-v4/.test(modelRef) ? 1_000_000 : 128_000;
}

export class SessionMeter {
  private cumulative: CostLedger;
  private turn = new CostLedger();
  private turnStarted = Date.now();
  private turnTokens = 0;
  /** Model rounds subagents ran for this turn: they count against its step limit. */
  subagentSteps = 0;
  outcome: TurnOutcome | undefined;

  constructor(saved: unknown) {
    let ledger: CostLedger;
    try {
      ledger = saved ? CostLedger.from(saved) : new CostLedger();
    } catch {
      ledger = new CostLedger();
    }
    this.cumulative = ledger;
  }

  state(): unknown {
    return this.cumulative.toJSON();
  }

  startTurn(): void {
    this.turn = new CostLedger();
    this.turnStarted = Date.now();
    this.turnTokens = 0;
    this.subagentSteps = 0;
    this.outcome = undefined;
  }

  /** Records a model round and returns the `usage_update` to send. */
  add(config: DaemonConfig, modelRef: string, usage: Usage): SessionUpdate {
    const at = new Date();
    this.cumulative.add(modelRef, usage, at, config.prices);
    this.turn.add(modelRef, usage, at, config.prices);
    this.turnTokens += usage.promptTokens + usage.completionTokens;
    const quote = this.cumulative.quote(displayCurrency(config));
    const money = quote.selected ?? quote.original;
    return {
      sessionUpdate: "usage_update",
      used: usage.promptTokens + usage.completionTokens,
      size: contextWindow(config, modelRef),
      ...(money ? { cost: { amount: money.amount, currency: money.currency } } : {}),
    };
  }

  /** A `usage_update` for a context that changed without a round (a compaction), with the cost so far. */
  contextUpdate(config: DaemonConfig, modelRef: string, used: number): SessionUpdate {
    const quote = this.cumulative.quote(displayCurrency(config));
    const money = quote.selected ?? quote.original;
    return {
      sessionUpdate: "usage_update",
      used,
      size: contextWindow(config, modelRef),
      ...(money ? { cost: { amount: money.amount, currency: money.currency } } : {}),
    };
  }

  /** The first budget of this turn that is used up, as the warning to show; undefined while within. */
  budgetExceeded(config: DaemonConfig): { reason: string; message: string } | undefined {
    const b = config.budgets;
    if (!b) return undefined;
    if (b.tokens !== undefined && this.turnTokens >= b.tokens) {
      return {
        reason: "token_budget",
        message: `[warning] Token budget reached: this turn used ${this.turnTokens} tokens of ${b.tokens}. Pausing; send a prompt to continue.`,
      };
    }
    const seconds = (Date.now() - this.turnStarted) / 1000;
    if (b.seconds !== undefined && seconds >= b.seconds) {
      return {
        reason: "time_budget",
        message: `[warning] Time budget reached: this turn ran ${Math.round(seconds)} s of ${b.seconds}. Pausing; send a prompt to continue.`,
      };
    }
    const spent = this.turn.quote(displayCurrency(config)).selected;
    if (b.cost !== undefined && spent && spent.amount >= b.cost) {
      return {
        reason: "cost_budget",
        message: `[warning] Cost budget reached: this turn cost ${spent.amount.toFixed(4)} ${spent.currency} of ${b.cost}. Pausing; send a prompt to continue.`,
      };
    }
    return undefined;
  }

  usageObject(config: DaemonConfig, which: "turn" | "cumulative"): Record<string, unknown> {
    const ledger = which === "turn" ? this.turn : this.cumulative;
    const quote: CostQuote = ledger.quote(displayCurrency(config));
    const legacy = legacyCost(quote);
    return { ...ledger.tokensTotals(), costQuote: quote, estimated: true, usageSource: "executor", ...(legacy ?? {}) };
  }
}

export function displayCurrency(config: DaemonConfig): DisplayCurrency {
  return config.displayCurrency ?? "auto";
}
