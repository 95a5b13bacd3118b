import { test } from "node:test";
import assert from "node:assert/strict";
import type { Usage } from "./types.js";
import { CostLedger, combineBands, costOf, legacyCost, priceFor, rateBand, type Price, type RateBand } from "./pricing.js";

const SCRIPTED: Usage = {
  promptTokens: 3_000_000,
  completionTokens: 500_000,
  cacheHitTokens: 1_000_000,
  cacheMissTokens: 2_000_000,
  reasoningTokens: 100_000,
};
const FLASH = "deepseek/deepseek-v4-flash";
const PRO = "deepseek/deepseek-v4-pro";
// 03:00 Beijing: off-peak, so band assertions elsewhere are not disturbed.
const NIGHT = new Date("2026-05-01T19:00:00Z");

const cents = (n: number) => Math.round(n * 100) / 100;
const micros = (n: number) => Math.round(n * 1e6) / 1e6;

test("costOf: scripted usage against every official row, to the cent and to 6 decimals", () => {
  const cases: Array<[string, "CNY" | "USD", number]> = [
    [FLASH, "CNY", 3.02],
    [FLASH, "USD", 0.4228],
    [PRO, "CNY", 9.025],
    [PRO, "USD", 1.308625],
  ];
  for (const [ref, currency, expected] of cases) {
    const official = priceFor(ref)?.official;
    assert.ok(official, ref);
    const cost = costOf(SCRIPTED, official[currency]);
    assert.equal(cents(cost), cents(expected), `${ref} ${currency}`);
    assert.equal(micros(cost), expected, `${ref} ${currency}`);
  }
});

test("costOf derives misses from the prompt total when the provider omitted them", () => {
  const price = priceFor(FLASH)!.identity;
  const omitted: Usage = { ...SCRIPTED, cacheMissTokens: 0 };
  assert.equal(micros(costOf(omitted, price)), 3.02);
  const allHits: Usage = { ...SCRIPTED, promptTokens: 1_000_000, cacheMissTokens: 0 };
  assert.equal(micros(costOf(allHits, price)), 1.02);
});

test("priceFor: official table by ref or bare id, overrides by ref or bare id, unknown → undefined", () => {
  const refUsd: Price = { currency: "USD", cacheHit: 0.01, input: 0.1, output: 0.2 };
  const bareCny: Price = { currency: "CNY", cacheHit: 0.5, input: 5, output: 10 };

  const official = priceFor(FLASH);
  assert.equal(official?.custom, false);
  assert.deepEqual(official?.identity, { currency: "CNY", cacheHit: 0.02, input: 1, output: 2 });
  assert.deepEqual(official?.official?.USD, { currency: "USD", cacheHit: 0.0028, input: 0.14, output: 0.28 });
  assert.deepEqual(priceFor("deepseek-v4-pro")?.identity, { currency: "CNY", cacheHit: 0.025, input: 3, output: 6 });

  const byRef = priceFor(FLASH, { [FLASH]: refUsd, "deepseek-v4-flash": bareCny });
  assert.equal(byRef?.custom, true);
  assert.deepEqual(byRef?.identity, refUsd, "a provider/model key beats a bare id");
  assert.ok(byRef?.official, "official rows stay available for cross-currency display");

  const byBare = priceFor("other/deepseek-v4-flash", { "deepseek-v4-flash": bareCny });
  assert.deepEqual(byBare?.identity, bareCny);
  assert.equal(byBare?.custom, true);

  const customOnly = priceFor("openrouter/qwen/qwen3-coder", { "qwen/qwen3-coder": refUsd });
  assert.deepEqual(customOnly, { identity: refUsd, custom: true }, "model ids may contain '/'");

  assert.equal(priceFor("ollama/llama3"), undefined);
  assert.equal(priceFor("ollama/llama3", { [FLASH]: refUsd }), undefined);
  assert.equal(priceFor("ollama/toString"), undefined, "prototype keys are not table entries");
});

test("quote on flash, auto: original CNY, identity selected, single_currency, matched", () => {
  const ledger = new CostLedger();
  ledger.add(FLASH, SCRIPTED, NIGHT);
  const q = ledger.quote("auto");
  assert.deepEqual(q, {
    original: { currency: "CNY", amount: 3.02 },
    originalTotals: [{ currency: "CNY", amount: 3.02 }],
    valuations: {
      identity: { basis: "identity", currency: "CNY", amount: 3.02 },
      official_table: { basis: "official_table", currency: "CNY", amount: 3.02 },
    },
    selected: { basis: "identity", currency: "CNY", amount: 3.02 },
    costComplete: true,
    displayComplete: true,
    complete: true,
    displayStatus: "matched",
    aggregateMode: "single_currency",
    rateBand: "off_peak",
    ratedAt: "2026-05-01T19:00:00.000Z",
    billingMode: "payg",
  });
  assert.deepEqual(legacyCost(q), { estimatedCost: 3.02, currency: "CNY" });
  assert.deepEqual(ledger.quote("CNY").selected, q.selected);
});

test("display USD on flash selects the official_table valuation, matched", () => {
  const ledger = new CostLedger();
  ledger.add(FLASH, SCRIPTED, NIGHT);
  const q = ledger.quote("USD");
  assert.deepEqual(q.original, { currency: "CNY", amount: 3.02 });
  assert.deepEqual(q.valuations.official_table, { basis: "official_table", currency: "USD", amount: 0.4228 });
  assert.deepEqual(q.selected, { basis: "official_table", currency: "USD", amount: 0.4228 });
  assert.equal(q.displayStatus, "matched");
  assert.equal(q.aggregateMode, "single_currency");
  assert.deepEqual(legacyCost(q), { estimatedCost: 0.4228, currency: "USD" });
});

test("pro model, two rounds, both currencies", () => {
  const ledger = new CostLedger();
  ledger.add(PRO, SCRIPTED, NIGHT);
  ledger.add(PRO, SCRIPTED, NIGHT);
  assert.deepEqual(ledger.quote("CNY").selected, { basis: "identity", currency: "CNY", amount: 18.05 });
  assert.deepEqual(ledger.quote("USD").selected, { basis: "official_table", currency: "USD", amount: 2.61725 });
});

test("overrides by ref and by bare id price the ledger; the user's own currency wins when it is the display one", () => {
  const usd: Price = { currency: "USD", cacheHit: 0.01, input: 0.1, output: 0.2 };
  for (const key of [FLASH, "deepseek-v4-flash"]) {
    const ledger = new CostLedger();
    const round = ledger.add(FLASH, SCRIPTED, NIGHT, { [key]: usd });
    assert.equal(round.custom, true);
    // 0.01 + 0.2 + 0.1
    assert.deepEqual(ledger.quote("USD").selected, { basis: "identity", currency: "USD", amount: 0.31 }, key);
    assert.deepEqual(ledger.quote("auto").original, { currency: "USD", amount: 0.31 }, key);
    // CNY is not the user's currency, but the official table still values every round in it.
    const cny = ledger.quote("CNY");
    assert.deepEqual(cny.selected, { basis: "official_table", currency: "CNY", amount: 3.02 }, key);
    assert.equal(cny.displayStatus, "matched");
  }
});

test("unknown model alone: unpriced, unavailable, no selected", () => {
  const ledger = new CostLedger();
  const round = ledger.add("ollama/llama3", SCRIPTED, NIGHT);
  assert.equal(round.priced, false);
  for (const display of ["auto", "CNY", "USD"] as const) {
    const q = ledger.quote(display);
    assert.equal(q.costComplete, false);
    assert.equal(q.displayComplete, false);
    assert.equal(q.complete, false);
    assert.equal(q.displayStatus, "unavailable");
    assert.equal(q.aggregateMode, "currency_buckets");
    assert.deepEqual(q.originalTotals, []);
    assert.deepEqual(q.valuations, {});
    assert.equal(q.original, undefined);
    assert.equal(q.selected, undefined);
    assert.equal(legacyCost(q), undefined);
  }
});

test("unknown model plus flash: partial total, costComplete false, USD falls back to the original currency", () => {
  const ledger = new CostLedger();
  ledger.add("ollama/llama3", SCRIPTED, NIGHT);
  ledger.add(FLASH, SCRIPTED, NIGHT);

  const auto = ledger.quote("auto");
  assert.equal(auto.costComplete, false);
  assert.equal(auto.displayStatus, "matched");
  assert.deepEqual(auto.selected, { basis: "identity", currency: "CNY", amount: 3.02 });
  assert.equal(auto.valuations.official_table, undefined, "the official table does not cover the unknown round");

  const usd = ledger.quote("USD");
  assert.equal(usd.costComplete, false);
  assert.equal(usd.displayStatus, "fallback_original");
  assert.deepEqual(usd.selected, { basis: "identity", currency: "CNY", amount: 3.02 });
  assert.equal(usd.displayComplete, true);
});

test("mixed currencies (custom USD model plus flash): currency_buckets, no selected", () => {
  const overrides: Record<string, Price> = { "openrouter/qwen3": { currency: "USD", cacheHit: 0, input: 1, output: 2 } };
  const ledger = new CostLedger();
  ledger.add("openrouter/qwen3", SCRIPTED, NIGHT, overrides);
  ledger.add(FLASH, SCRIPTED, NIGHT, overrides);
  for (const display of ["auto", "CNY", "USD"] as const) {
    const q = ledger.quote(display);
    assert.equal(q.costComplete, true, display);
    assert.equal(q.aggregateMode, "currency_buckets", display);
    assert.equal(q.displayStatus, "bucketed", display);
    assert.equal(q.displayComplete, false, display);
    assert.equal(q.complete, false, display);
    assert.equal(q.original, undefined, display);
    assert.equal(q.selected, undefined, display);
    assert.equal(q.valuations.identity, undefined, display);
    assert.equal(legacyCost(q), undefined, display);
    assert.deepEqual(
      q.originalTotals,
      [
        { currency: "CNY", amount: 3.02 },
        { currency: "USD", amount: 3 },
      ],
      display,
    );
  }
});

test("mixed identity currencies that the official table covers: common_valuation", () => {
  const overrides: Record<string, Price> = {
    "openrouter/deepseek-v4-flash": { currency: "USD", cacheHit: 0.01, input: 0.1, output: 0.2 },
  };
  const ledger = new CostLedger();
  ledger.add("openrouter/deepseek-v4-flash", SCRIPTED, NIGHT, overrides);
  ledger.add(FLASH, SCRIPTED, NIGHT, overrides);
  const q = ledger.quote("USD");
  assert.equal(q.aggregateMode, "common_valuation");
  assert.equal(q.displayStatus, "matched");
  assert.deepEqual(q.selected, { basis: "official_table", currency: "USD", amount: 0.8456 });
  assert.equal(q.original, undefined);
  assert.equal(q.originalTotals.length, 2);
  assert.equal(ledger.quote("auto").displayStatus, "bucketed", "auto has no single original currency to show");
});

test("rate bands: Beijing peak windows, start inclusive, end exclusive", () => {
  const cases: Array<[string, RateBand]> = [
    ["2026-05-01T00:59:59Z", "off_peak"], // 08:59:59
    ["2026-05-01T01:00:00Z", "peak"], // 09:00
    ["2026-05-01T03:59:59Z", "peak"], // 11:59:59
    ["2026-05-01T04:00:00Z", "off_peak"], // 12:00
    ["2026-05-01T05:59:59Z", "off_peak"], // 13:59:59
    ["2026-05-01T06:00:00Z", "peak"], // 14:00
    ["2026-05-01T09:59:59Z", "peak"], // 17:59:59
    ["2026-05-01T10:00:00Z", "off_peak"], // 18:00
    ["2026-05-01T16:00:00Z", "off_peak"], // 00:00 next day
  ];
  for (const [iso, band] of cases) assert.equal(rateBand(new Date(iso)), band, iso);

  assert.equal(combineBands(undefined, "peak"), "peak");
  assert.equal(combineBands("peak", "peak"), "peak");
  assert.equal(combineBands("peak", "off_peak"), "mixed");
  assert.equal(combineBands("mixed", "peak"), "mixed");
  assert.equal(combineBands("off_peak", "mixed"), "mixed");

  const ledger = new CostLedger();
  ledger.add(FLASH, SCRIPTED, new Date("2026-05-01T01:00:00Z"));
  assert.equal(ledger.quote("auto").rateBand, "peak");
  ledger.add(FLASH, SCRIPTED, new Date("2026-05-01T10:00:00Z"));
  const q = ledger.quote("auto");
  assert.equal(q.rateBand, "mixed");
  assert.equal(q.ratedAt, "2026-05-01T10:00:00.000Z");
});

test("tokensTotals sums rounds, derives missing misses, and reports the hit ratio", () => {
  const empty = new CostLedger();
  assert.equal(empty.tokensTotals().cacheHitRatio, 0);
  assert.equal(empty.quote("auto").displayStatus, "unavailable");

  const ledger = new CostLedger();
  ledger.add(FLASH, SCRIPTED, NIGHT);
  ledger.add(FLASH, { ...SCRIPTED, cacheMissTokens: 0 }, NIGHT);
  assert.deepEqual(ledger.tokensTotals(), {
    promptTokens: 6_000_000,
    completionTokens: 1_000_000,
    totalTokens: 7_000_000,
    reasoningTokens: 200_000,
    cacheHitTokens: 2_000_000,
    cacheMissTokens: 4_000_000,
    cacheHitRatio: 1 / 3,
    rounds: 2,
  });
});

test("toJSON / from round trip through JSON text, and keeps accumulating", () => {
  const ledger = new CostLedger();
  ledger.add(FLASH, SCRIPTED, new Date("2026-05-01T01:00:00Z"));
  ledger.add("ollama/llama3", SCRIPTED, NIGHT);

  const restored = CostLedger.from(JSON.parse(JSON.stringify(ledger)));
  for (const display of ["auto", "CNY", "USD"] as const) {
    assert.deepEqual(restored.quote(display), ledger.quote(display), display);
  }
  assert.deepEqual(restored.tokensTotals(), ledger.tokensTotals());
  assert.deepEqual(restored.toJSON(), ledger.toJSON());

  restored.add(PRO, SCRIPTED, NIGHT);
  assert.equal(ledger.tokensTotals().rounds, 2, "the restored copy does not share state with the original");
  assert.equal(restored.quote("CNY").selected?.amount, 12.045);

  const snapshot = ledger.toJSON();
  snapshot.rounds = 99;
  assert.equal(ledger.tokensTotals().rounds, 2, "toJSON hands out a copy");

  assert.throws(() => CostLedger.from({ version: 2 }));
  assert.throws(() => CostLedger.from(null));
});
