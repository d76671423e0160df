import type { ProviderFacts } from '../../formats/providers/facts.ts';

/** USD per million tokens, by model. */
export type Prices = Readonly<Record<string, { readonly input: number; readonly output: number; readonly cached_input?: number | undefined }>>;

/**
 * What one call cost: the provider's own figure when its stream gives one (claude's
 * total_cost_usd), else its tokens at the operator's prices for the model (cached input
 * at its own price where one is given), else null: unknown spend, as the ledger counts it.
 */
export function costOf(facts: ProviderFacts | null, model: string | null, prices: Prices | undefined): number | null {
  if (facts === null) return null;
  if (facts.costUsd !== null) return facts.costUsd;
  const price = model === null || prices === undefined || !Object.hasOwn(prices, model) ? undefined : prices[model];
  if (facts.usage === null || price === undefined) return null;
  const cached = Math.min(facts.usage.cachedInput, facts.usage.input);
  const usd = ((facts.usage.input - cached) * price.input + cached * (price.cached_input ?? price.input) + facts.usage.output * price.output) / 1e6;
  return Math.round(usd * 1e8) / 1e8;
}
