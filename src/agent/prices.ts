import type { Usage } from './events.js';

/** US dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache; default: `input`. */
  cachedInput?: number;
  /** Input tokens written to the provider's prompt cache; default: `input` (OpenAI charges nothing extra). */
  cacheWrite?: number;
}

/**
 * List prices (USD per million tokens) of common models, as published by their providers in 2026. A guide for
 * the cost limit, not a bill: override or add entries with `agent.prices` in tack.json. Keys are the model id
 * (without the provider); the longest key that prefixes the id wins, so dated snapshots
 * (`claude-sonnet-4-5-20250929`) match their family. Anthropic bills a cache write (5-minute lifetime) at 1.25 times
 * the input price and a cache read at 0.1 times; OpenAI writes at the input price.
 */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  'claude-opus-4': { input: 15, output: 75, cachedInput: 1.5, cacheWrite: 18.75 },
  'claude-opus-4-5': { input: 5, output: 25, cachedInput: 0.5, cacheWrite: 6.25 },
  'claude-sonnet-4': { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4': { input: 1, output: 5, cachedInput: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cachedInput: 0.08, cacheWrite: 1 },
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
  const read = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.inputTokens - read);
  return (
    ((usage.inputTokens - read - written) * price.input +
      read * (price.cachedInput ?? price.input) +
      written * (price.cacheWrite ?? price.input) +
      usage.outputTokens * price.output) /
    1_000_000
  );
}

/**
 * A session's usage in one line (`/cost`): input tokens with what the prompt cache served and took, output, cost.
 * `format` writes a token count (the chat abbreviates, `12.3k`).
 */
export function usageText(u: Usage, format: (tokens: number) => string = String): string {
  const written = u.cacheWriteTokens ?? 0;
  const cache = `${format(u.cachedInputTokens)} cached${written > 0 ? `, ${format(written)} written to the cache` : ''}`;
  return `${format(u.inputTokens)} input tokens (${cache}), ${format(u.outputTokens)} output, $${u.costUsd.toFixed(4)}`;
}

export function addUsage(a: Usage, b: Usage): Usage {
  const written = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    ...(written > 0 ? { cacheWriteTokens: written } : {}),
    costUsd: a.costUsd + b.costUsd,
  };
}
