/**
 * Rate-card cost estimates and the status `costQuote` (reference §10 "Price tables", "costQuote").
 * These are estimates from published or configured prices, never the provider's invoice.
 */
import { z } from "zod";
import type { Usage } from "./types.js";

export type Currency = "CNY" | "USD";
const CURRENCIES: readonly Currency[] = ["CNY", "USD"];

/** Per 1M tokens. Structurally the same as config.json's `prices` entries. */
export interface Price {
  currency: Currency;
  cacheHit: number;
  input: number;
  output: number;
}

/** DeepSeek's published pay-as-you-go table, keyed by bare model id. */
const OFFICIAL: Readonly<Record<string, Record<Currency, Price>>> = {
  "deepseek-v4-flash": {
    CNY: { currency: "CNY", cacheHit: 0.02, input: 1, output: 2 },
    USD: { currency: "USD", cacheHit: 0.0028, input: 0.14, output: 0.28 },
  },
  "deepseek-v4-pro": {
    CNY: { currency: "CNY", cacheHit: 0.025, input: 3, output: 6 },
    USD: { currency: "USD", cacheHit: 0.003625, input: 0.435, output: 0.87 },
  },
};

export interface PriceLookup {
  /** The price the user is charged in: a configured override, else the official CNY row. */
  identity: Price;
  /** The official rows, when the model is in the table (even if overridden), for cross-currency display. */
  official?: Record<Currency, Price>;
  custom: boolean;
}

/** Model ids may themselves contain "/" (e.g. OpenRouter), so only the first segment is the provider. */
function modelId(modelRef: string): string {
  const slash = modelRef.indexOf("/");
  return slash < 0 ? modelRef : modelRef.slice(slash + 1);
}

export function priceFor(modelRef: string, overrides?: Record<string, Price>): PriceLookup | undefined {
  const id = modelId(modelRef);
  const official = Object.hasOwn(OFFICIAL, id) ? OFFICIAL[id] : undefined;
  const custom = overrides && (own(overrides, modelRef) ?? own(overrides, id));
  if (custom) return { identity: { ...custom }, ...(official ? { official } : {}), custom: true };
  if (official) return { identity: official.CNY, official, custom: false };
  return undefined;
}

function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Providers sometimes omit the miss count; DeepSeek's own normaliser then derives it from the prompt total. */
function missTokens(usage: Usage): number {
  if (usage.cacheMissTokens === 0 && usage.promptTokens > usage.cacheHitTokens) {
    return usage.promptTokens - usage.cacheHitTokens;
  }
  return usage.cacheMissTokens;
}

export function costOf(usage: Usage, price: Price): number {
  return (price.cacheHit * usage.cacheHitTokens + price.input * missTokens(usage) + price.output * usage.completionTokens) / 1e6;
}

export type RateBand = "peak" | "off_peak";
export type RateBandSummary = RateBand | "mixed";

const BEIJING_OFFSET_HOURS = 8;

/** Peak is 09:00–12:00 and 14:00–18:00 Beijing time; boundaries fall on whole hours, so the hour decides. */
export function rateBand(at: Date): RateBand {
  const hour = (at.getUTCHours() + BEIJING_OFFSET_HOURS) % 24;
  return (hour >= 9 && hour < 12) || (hour >= 14 && hour < 18) ? "peak" : "off_peak";
}

/** Reducer: fold one more round's band (or another ledger's summary) into a running summary. */
export function combineBands(acc: RateBandSummary | undefined, next: RateBandSummary): RateBandSummary {
  if (acc === undefined || acc === next) return next;
  return "mixed";
}

export interface Money {
  currency: Currency;
  amount: number;
}
export type ValuationBasis = "identity" | "official_table";
export interface Valuation extends Money {
  basis: ValuationBasis;
}
export type DisplayCurrency = "auto" | Currency;
export type DisplayStatus = "matched" | "fallback_original" | "bucketed" | "unavailable";
export type AggregateMode = "single_currency" | "common_valuation" | "currency_buckets";

export interface CostQuote {
  original?: Money;
  originalTotals: Money[];
  valuations: { identity?: Valuation; official_table?: Valuation };
  selected?: Valuation;
  costComplete: boolean;
  displayComplete: boolean;
  complete: boolean;
  displayStatus: DisplayStatus;
  aggregateMode: AggregateMode;
  rateBand?: RateBandSummary;
  ratedAt?: string;
  billingMode: "payg";
}

export interface TokenTotals {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  reasoningTokens: number;
  cacheHitTokens: number;
  cacheMissTokens: number;
  cacheHitRatio: number;
  rounds: number;
}

/** What `add` computed for one round, for callers that log or forward it. */
export interface RoundCost {
  modelRef: string;
  at: string;
  band: RateBand;
  priced: boolean;
  custom: boolean;
  identity?: Money;
  official?: Record<Currency, number>;
}

const PerCurrency = z.object({ CNY: z.number().nonnegative(), USD: z.number().nonnegative() });
type PerCurrency = z.infer<typeof PerCurrency>;

const count = z.number().int().nonnegative();
const LedgerState = z.object({
  version: z.literal(1),
  tokens: z.object({
    promptTokens: count,
    completionTokens: count,
    cacheHitTokens: count,
    cacheMissTokens: count,
    reasoningTokens: count,
  }),
  rounds: count,
  // Round counts per currency, not amounts: a zero-token round still fixes which currency it was in.
  identityRounds: PerCurrency,
  identityTotals: PerCurrency,
  officialRounds: PerCurrency,
  officialTotals: PerCurrency,
  rateBand: z.enum(["peak", "off_peak", "mixed"]).optional(),
  ratedAt: z.string().optional(),
});
/** Aggregates only, so the persisted size does not grow with the number of rounds. */
export type CostLedgerState = z.infer<typeof LedgerState>;

const zero = (): PerCurrency => ({ CNY: 0, USD: 0 });

function round6(amount: number): number {
  return Math.round(amount * 1e6) / 1e6;
}

function money(currency: Currency, amount: number): Money {
  return { currency, amount: round6(amount) };
}

function valuation(basis: ValuationBasis, currency: Currency, amount: number): Valuation {
  return { basis, currency, amount: round6(amount) };
}

export class CostLedger {
  private state: CostLedgerState = {
    version: 1,
    tokens: { promptTokens: 0, completionTokens: 0, cacheHitTokens: 0, cacheMissTokens: 0, reasoningTokens: 0 },
    rounds: 0,
    identityRounds: zero(),
    identityTotals: zero(),
    officialRounds: zero(),
    officialTotals: zero(),
  };

  /** Accepts whatever was read back from disk; throws on a malformed snapshot rather than mis-billing. */
  static from(json: unknown): CostLedger {
    const ledger = new CostLedger();
    ledger.state = structuredClone(LedgerState.parse(json));
    return ledger;
  }

  toJSON(): CostLedgerState {
    return structuredClone(this.state);
  }

  add(modelRef: string, usage: Usage, at: Date, overrides?: Record<string, Price>): RoundCost {
    const ratedAt = at.toISOString(); // throws on an invalid Date before any state changes
    const band = rateBand(at);
    const lookup = priceFor(modelRef, overrides);
    const s = this.state;

    s.rounds += 1;
    s.tokens.promptTokens += usage.promptTokens;
    s.tokens.completionTokens += usage.completionTokens;
    s.tokens.reasoningTokens += usage.reasoningTokens;
    s.tokens.cacheHitTokens += usage.cacheHitTokens;
    s.tokens.cacheMissTokens += missTokens(usage);
    s.rateBand = combineBands(s.rateBand, band);
    s.ratedAt = ratedAt;

    const round: RoundCost = { modelRef, at: ratedAt, band, priced: lookup !== undefined, custom: lookup?.custom ?? false };
    if (!lookup) return round;

    const identityAmount = costOf(usage, lookup.identity);
    s.identityRounds[lookup.identity.currency] += 1;
    s.identityTotals[lookup.identity.currency] += identityAmount;
    round.identity = { currency: lookup.identity.currency, amount: identityAmount };

    if (lookup.official) {
      const official = zero();
      for (const c of CURRENCIES) {
        official[c] = costOf(usage, lookup.official[c]);
        s.officialRounds[c] += 1;
        s.officialTotals[c] += official[c];
      }
      round.official = official;
    }
    return round;
  }

  tokensTotals(): TokenTotals {
    const t = this.state.tokens;
    const cached = t.cacheHitTokens + t.cacheMissTokens;
    return {
      promptTokens: t.promptTokens,
      completionTokens: t.completionTokens,
      totalTokens: t.promptTokens + t.completionTokens,
      reasoningTokens: t.reasoningTokens,
      cacheHitTokens: t.cacheHitTokens,
      cacheMissTokens: t.cacheMissTokens,
      cacheHitRatio: cached === 0 ? 0 : t.cacheHitTokens / cached,
      rounds: this.state.rounds,
    };
  }

  quote(displayCurrency: DisplayCurrency): CostQuote {
    const s = this.state;
    const buckets = CURRENCIES.filter((c) => s.identityRounds[c] > 0);
    const pricedRounds = buckets.reduce((n, c) => n + s.identityRounds[c], 0);
    const originalCurrency = buckets.length === 1 ? buckets[0] : undefined;
    const target = displayCurrency === "auto" ? originalCurrency : displayCurrency;

    const identity = originalCurrency && valuation("identity", originalCurrency, s.identityTotals[originalCurrency]);
    // Only a valuation that covers every round may stand in for the total; a partial one would understate it.
    const official =
      target && s.rounds > 0 && s.officialRounds[target] === s.rounds ? valuation("official_table", target, s.officialTotals[target]) : undefined;

    let selected: Valuation | undefined;
    let displayStatus: DisplayStatus;
    if (pricedRounds === 0) {
      displayStatus = "unavailable";
    } else if (identity && identity.currency === target) {
      // The user's own price in the wanted currency beats a converted official figure.
      selected = identity;
      displayStatus = "matched";
    } else if (official) {
      selected = official;
      displayStatus = "matched";
    } else if (identity) {
      selected = identity;
      displayStatus = "fallback_original";
    } else {
      displayStatus = "bucketed";
    }

    const aggregateMode: AggregateMode = originalCurrency ? "single_currency" : selected ? "common_valuation" : "currency_buckets";

    const quote: CostQuote = {
      originalTotals: buckets.map((c) => money(c, s.identityTotals[c])),
      valuations: {},
      costComplete: pricedRounds === s.rounds,
      displayComplete: selected !== undefined,
      complete: selected !== undefined,
      displayStatus,
      aggregateMode,
      billingMode: "payg",
    };
    if (originalCurrency) quote.original = money(originalCurrency, s.identityTotals[originalCurrency]);
    if (identity) quote.valuations.identity = identity;
    if (official) quote.valuations.official_table = official;
    if (selected) quote.selected = selected;
    if (s.rateBand) quote.rateBand = s.rateBand;
    if (s.ratedAt) quote.ratedAt = s.ratedAt;
    return quote;
  }
}

/** The pre-costQuote `estimatedCost` / `currency` pair, which clients read as the displayed total. */
export function legacyCost(quote: CostQuote): { estimatedCost: number; currency: string } | undefined {
  return quote.selected && { estimatedCost: quote.selected.amount, currency: quote.selected.currency };
}
