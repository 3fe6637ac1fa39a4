import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/agent/compaction.js';
import {
  countTokens,
  countTokensMany,
  estimateTextTokens,
  type TokenCountCache,
  tokenCounting,
  toolDefinitionText,
} from '../../src/tokens/count.js';
import { REPO } from '../helpers/project.js';

const QWEN = 'openai-compatible:qwen3-8b';

/** The sample docs/harness.md gives the estimate's error on: the README and docs/, and a catalog of 21 tools. */
function sample(): { prose: string[]; tools: string[] } {
  const docs = join(REPO, 'docs');
  const prose = [
    readFileSync(join(REPO, 'README.md'), 'utf8'),
    ...readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => readFileSync(join(docs, f), 'utf8')),
  ];
  const catalog = JSON.parse(
    readFileSync(join(REPO, 'test', 'fixtures', 'tool-search', 'tools.json'), 'utf8'),
  ) as Array<{ name: string; description: string; inputSchema: unknown }>;
  const tools = catalog.map((t) => toolDefinitionText(t));
  return { prose, tools };
}

/** The estimate's total against Qwen3's, as a ratio minus one, and the median error of a single text. */
async function error(texts: readonly string[]): Promise<{ total: number; median: number }> {
  const real = await Promise.all(texts.map((t) => countTokens(t, QWEN)));
  const estimated = texts.map(estimateTextTokens);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const each = texts.map((_, i) => Math.abs(estimated[i]! / real[i]! - 1)).sort((a, b) => a - b);
  return { total: sum(estimated) / sum(real) - 1, median: each[Math.floor(each.length / 2)]! };
}

describe('the token estimate', () => {
  it('is within 15% of the Qwen3 tokenizer in total on prose and on tool definitions alike', async () => {
    const { prose, tools } = sample();
    const onProse = await error(prose);
    const onTools = await error(tools);
    // Measured: prose -10% in total (median text 7%), tools +5% (median 4%); characters/4 is -10% and +19%.
    expect(Math.abs(onProse.total)).toBeLessThan(0.15);
    expect(Math.abs(onTools.total)).toBeLessThan(0.15);
    expect(onProse.median).toBeLessThan(0.12);
    expect(onTools.median).toBeLessThan(0.12);
  }, 60_000);

  it('counts words, short numbers, punctuation runs and CJK characters', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('Get the forecast')).toBe(3);
    expect(estimateTextTokens('{"city":"Tokyo"}')).toBe(5); // {"  city  ":"  Tokyo  "}
    expect(estimateTextTokens('12345')).toBe(2);
    expect(estimateTextTokens('東京の天気')).toBe(5);
    expect(estimateTextTokens('internationalization')).toBe(2);
  });

  it('is what counts without a known tokenizer, and what compaction budgets with', async () => {
    expect(tokenCounting()).toMatchObject({ tokenizer: 'estimate' });
    expect(tokenCounting('anthropic:claude-sonnet-4-5')).toMatchObject({ tokenizer: 'estimate' });
    expect(tokenCounting(QWEN)).toEqual({ tokenizer: 'qwen3', label: 'Qwen3 tokenizer' });
    const text = readFileSync(join(REPO, 'README.md'), 'utf8');
    expect(await countTokens(text)).toBe(estimateTextTokens(text));
    expect(await countTokens(text, 'openai:gpt-5')).toBe(estimateTextTokens(text));
    expect(estimateTokens([{ role: 'user', content: text }])).toBe(estimateTextTokens(text));
    // An estimate is never cached: a cache that throws on any use is not even asked.
    const refusing: TokenCountCache = {
      get: () => Promise.reject(new Error('asked')),
      put: () => Promise.reject(new Error('asked')),
    };
    let asked = 0;
    const counting: TokenCountCache = {
      get: async () => {
        asked++;
        return new Map();
      },
      put: async () => {},
    };
    expect(await countTokensMany([text, 'x'], refusing)).toEqual([estimateTextTokens(text), 1]);
    await countTokensMany(['x'], counting);
    expect(asked).toBe(0);
    await countTokensMany(['x'], counting, QWEN);
    expect(asked).toBe(1);
  });
});
