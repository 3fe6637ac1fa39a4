import type { Usage } from './events.js';

/** US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache; default: `input`. */
  cachedInput?: number;
}

/**
 * List prices (USD per million tokens) of common models, as published by their providers in 2026. A guide for
 * the cost limit, not a bill: override or add entries with `agent.prices` in tack.json. Keys are the model id
 * (without the provider); the longest key that prefixes the id wins, so dated snapshots
 * (`claude-sonnet-4-5-20250929`) match their family.
 */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  'claude-opus-4': { input: 15, output: 75, cachedInput: 1.5 },
  'claude-opus-4-5': { input: 5, output: 25, cachedInput: 0.5 },
  'claude-sonnet-4': { input: 3, output: 15, cachedInput: 0.3 },
  'claude-haiku-4': { input: 1, output: 5, cachedInput: 0.1 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cachedInput: 0.08 },
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
};

/** The price of a model id, or undefined when none is known (a local model, a new one). */
export function priceOf(
  id: string,
  table: Readonly<Record<string, Price>> = DEFAULT_PRICES,
): Price | undefined {
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (
      (id === key || id.startsWith(`${key}-`) || id.startsWith(`${key}.`)) &&
      key.length > (best?.length ?? -1)
    )
      best = key;
  }
  return best === undefined ? undefined : table[best];
}

export function costOf(usage: Omit<Usage, 'costUsd'>, price: Price | undefined): number {
  if (!price) return 0;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  return (
    ((usage.inputTokens - cached) * price.input +
      cached * (price.cachedInput ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000
  );
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    costUsd: a.costUsd + b.costUsd,
  };
}
