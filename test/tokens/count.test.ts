import { describe, expect, it } from 'vitest';
import {
  countTokens,
  modelToolOf,
  toolDefinitionText,
  toolDefinitionTokens,
} from '../../src/tokens/count.js';

describe('token counts (Qwen3 tokenizer)', () => {
  it('count the skill metadata of the background documents as 41 tokens', async () => {
    const text =
      'name: pdf-processing\ndescription: Extract text and tables from PDF files, fill forms, merge documents. ' +
      'Use when working with PDF files or when the user mentions PDFs, forms, or document extraction.';
    expect(await countTokens(text)).toBe(41);
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
    expect(await toolDefinitionTokens(modelToolOf(tool))).toBe(42);
    // A definition without a description is sent with its title (else its name), as the agent sends it.
    const untitled = {
      ...tool,
      definition: { ...tool.definition, description: undefined, title: 'Forecast' },
    };
    expect(modelToolOf(untitled).description).toBe('Forecast');
  });
});
