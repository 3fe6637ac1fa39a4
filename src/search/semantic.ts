import { createHash } from 'node:crypto';
import { errorMessage } from '../errors.js';
import { type RankedList, reciprocalRankFusion, topK } from './fusion.js';
import { nameWords } from './tokenize.js';
import type { SearchableTool, ToolHit, ToolSearchIndex } from './tool-index.js';
import { schemaText } from './tool-index.js';

/**
 * Optional semantic ranking: tool definitions and queries as embedding vectors (any OpenAI-compatible embeddings
 * endpoint, embeddings.ts), cosine similarity, fused with the lexical ranking by reciprocal rank fusion. It
 * closes the vocabulary gap a lexical index cannot ("price of Dogecoin" for a tool about "cryptocurrencies").
 * Vectors are cached by a digest of the text embedded, so a definition is embedded again only when it changes;
 * when the endpoint cannot be reached the search is lexical, and the endpoint is tried again after a pause.
 */

/** Texts to vectors, in order; rejects when the endpoint fails. */
export type EmbedFunction = (texts: string[], signal?: AbortSignal) => Promise<number[][]>;

/** Where vectors outlive the process (the store's `toolEmbeddings`), keyed by model and text digest. */
export interface EmbeddingCache {
  get(model: string, digests: readonly string[]): Promise<Map<string, Float32Array>>;
  put(model: string, entries: ReadonlyArray<{ digest: string; vector: Float32Array }>): Promise<void>;
}

export interface SemanticOptions {
  /** Names the model and endpoint in the cache: vectors of two models never mix. */
  model: string;
  embed: EmbedFunction;
  cache?: EmbeddingCache | undefined;
  /** The semantic list's weight in the fusion, against the lexical list's 1 (default 1). */
  weight?: number | undefined;
  /** After a failure, how long to search lexically before trying the endpoint again (default 60 s). */
  retryAfterMs?: number | undefined;
  /** Texts per embeddings request (default 64). */
  batch?: number | undefined;
  /** Told once per outage why the search is lexical only. */
  onUnavailable?: ((reason: string) => void) | undefined;
}

/** How a search went: with the semantic list, or lexical only (off, or the endpoint down). */
export type SemanticState = 'used' | 'off' | 'unavailable';

const MAX_TEXT = 2000;

/** What is embedded for a tool: its name in words, title, description and parameters. */
export function embeddingText(tool: SearchableTool): string {
  const text = [nameWords(tool.name), tool.title ?? '', tool.description ?? '', schemaText(tool.inputSchema)]
    .filter((part) => part.trim() !== '')
    .join('\n');
  return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text;
}

export function textDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function normalise(vector: readonly number[]): Float32Array {
  let norm = 0;
  for (const v of vector) norm += v * v;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Float32Array.from(vector, (v) => v * scale);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Vectors for a catalog's tools, embedded on demand and cached; cosine ranking for queries. */
export class SemanticRanker {
  readonly #options: SemanticOptions;
  readonly #vectors = new Map<string, Float32Array>();
  #downUntil = 0;
  #reported = false;

  constructor(options: SemanticOptions) {
    this.#options = options;
  }

  /** Whether the endpoint is being left alone after a failure. */
  get resting(): boolean {
    return Date.now() < this.#downUntil;
  }

  async #embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const batch = this.#options.batch ?? 64;
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += batch) {
      const chunk = texts.slice(i, i + batch);
      const vectors = await this.#options.embed(chunk, signal);
      if (vectors.length !== chunk.length)
        throw new Error(`expected ${chunk.length} vectors, got ${vectors.length}`);
      for (const v of vectors) out.push(normalise(v));
    }
    return out;
  }

  #fail(error: unknown): void {
    this.#downUntil = Date.now() + (this.#options.retryAfterMs ?? 60_000);
    if (this.#reported) return;
    this.#reported = true;
    this.#options.onUnavailable?.(errorMessage(error));
  }

  /**
   * Per query, the tools best first by cosine similarity (at most `depth`); undefined when the endpoint cannot
   * be reached (resting after a failure, or failing now): the caller searches lexically.
   */
  async rank(
    tools: readonly SearchableTool[],
    queries: readonly string[],
    depth: number,
    signal?: AbortSignal,
  ): Promise<SearchableTool[][] | undefined> {
    if (this.resting || tools.length === 0) return undefined;
    const { model, cache } = this.#options;
    try {
      const texts = tools.map(embeddingText);
      const digests = texts.map(textDigest);
      const missing = digests.filter((d) => !this.#vectors.has(d));
      if (missing.length > 0 && cache) {
        try {
          for (const [digest, vector] of await cache.get(model, [...new Set(missing)]))
            this.#vectors.set(digest, vector);
        } catch {
          // A store that cannot be read costs the cache, not the search.
        }
      }
      const todo = [...new Set(digests.filter((d) => !this.#vectors.has(d)))];
      if (todo.length > 0) {
        const textOf = new Map(digests.map((d, i) => [d, texts[i]!]));
        const vectors = await this.#embed(
          todo.map((d) => textOf.get(d)!),
          signal,
        );
        const entries = todo.map((digest, i) => ({ digest, vector: vectors[i]! }));
        for (const { digest, vector } of entries) this.#vectors.set(digest, vector);
        try {
          await cache?.put(model, entries);
        } catch {
          // Not kept: embedded again next process.
        }
      }
      const queryVectors = await this.#embed([...queries], signal);
      this.#reported = false;
      return queryVectors.map((q) => {
        const scored = tools.map((tool, i) => ({ tool, i, score: dot(q, this.#vectors.get(digests[i]!)!) }));
        return topK(
          scored,
          depth,
          (s) => s.score,
          (s) => s.i,
        ).map((s) => s.tool);
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      this.#fail(error);
      return undefined;
    }
  }

  get weight(): number {
    return this.#options.weight ?? 1;
  }
}

export interface HybridResult {
  hits: ToolHit[];
  semantic: SemanticState;
}

/**
 * Several queries over the lexical index and, when given and reachable, the semantic ranker: each query's
 * lexical list and semantic list, all merged by reciprocal rank fusion (the lexical index's fusion k). Without a
 * semantic ranker (or with its endpoint down) this is exactly `index.searchMany`.
 */
export async function hybridSearch(
  index: ToolSearchIndex,
  tools: readonly SearchableTool[],
  queries: readonly string[],
  k: number,
  semantic: SemanticRanker | undefined,
  options: { explain?: boolean; signal?: AbortSignal } = {},
): Promise<HybridResult> {
  const lexicalOnly = (state: SemanticState): HybridResult => ({
    hits: index.searchMany(queries, k, { explain: options.explain ?? false }),
    semantic: state,
  });
  if (!semantic) return lexicalOnly('off');
  const depth = Math.max(k, 20);
  const ranked = await semantic.rank(tools, queries, depth, options.signal);
  if (!ranked) return lexicalOnly('unavailable');
  const { fusionK, fusionMix } = index.ranking;
  const explained = new Map<SearchableTool, ToolHit>();
  // Per query, its lexical and semantic lists agree for a reason (plain RRF); across queries, each need gets its
  // best tools near the top (fusionMix), as in ToolSearchIndex.searchMany.
  const lists: Array<RankedList<SearchableTool>> = queries.map((query, i) => {
    const lexical = index.search(query, depth, { explain: options.explain ?? false });
    for (const hit of lexical) if (!explained.has(hit.tool)) explained.set(hit.tool, hit);
    const fused = reciprocalRankFusion(
      [{ items: lexical.map((h) => h.tool) }, { items: ranked[i]!, weight: semantic.weight }],
      fusionK,
    );
    return { items: fused.slice(0, depth).map((f) => f.item) };
  });
  const hits = reciprocalRankFusion(lists, fusionK, fusionMix)
    .slice(0, k)
    .map(({ item, score }): ToolHit => {
      const explain = explained.get(item)?.explain;
      return { tool: item, score, ...(explain ? { explain } : {}) };
    });
  return { hits, semantic: 'used' };
}
