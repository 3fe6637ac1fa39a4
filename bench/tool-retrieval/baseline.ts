import type { SearchableTool, ToolHit } from '../../src/search/tool-index.js';

/**
 * The yardstick tool search is measured against: Okapi BM25 (k1 1.2, b 0.75) over one field per tool, the
 * concatenation of what tack's ranker also reads: the tool's name, its description and its parameter names
 * (`inputSchema` properties at any depth, through `items`), plus learned `examples` when a tool carries them so
 * that a learned-examples figure compares like with like. Tokens: letters and digits, split at camelCase, snake,
 * kebab and letter/digit boundaries, lower-cased; no stemming and no stop words (IDF already makes function words
 * cheap, and a baseline should not carry choices of its own). IDF is ln(1 + (N - n + 0.5) / (n + 0.5)), Lucene's
 * form: the classic ln((N - n + 0.5) / (n + 0.5)) turns negative for a word in more than half the tools, which on a
 * 30-tool catalog would punish matching a common word. Written out rather than taken from a library so that it is
 * exactly this formula, nothing tuned: libraries add field boosts, prefix and fuzzy matches, or their own IDF.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Where one word of letters and digits breaks: `getHTTPServer2` -> get HTTP Server 2. */
const BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;

export function baselineTokens(text: string): string[] {
  return (text.normalize('NFKC').match(/[\p{L}\p{M}\p{N}]+/gu) ?? []).flatMap((word) =>
    word.split(BOUNDARY).map((part) => part.toLowerCase()),
  );
}

function parameterNames(schema: unknown, depth = 0): string[] {
  if (typeof schema !== 'object' || schema === null || depth > 8) return [];
  const { properties, items } = schema as { properties?: unknown; items?: unknown };
  const props = typeof properties === 'object' && properties !== null ? Object.entries(properties) : [];
  return [
    ...props.flatMap(([name, sub]) => [name, ...parameterNames(sub, depth + 1)]),
    ...parameterNames(items, depth + 1),
  ];
}

export function baselineText(tool: SearchableTool): string {
  return [
    tool.name,
    tool.description ?? '',
    ...parameterNames(tool.inputSchema),
    ...(tool.examples ?? []),
  ].join(' ');
}

export class BaselineToolIndex {
  readonly #tools: readonly SearchableTool[];
  readonly #tf: Array<Map<string, number>>;
  readonly #length: number[];
  readonly #df = new Map<string, number>();
  readonly #avgLength: number;

  private constructor(tools: readonly SearchableTool[]) {
    this.#tools = tools;
    this.#tf = tools.map((tool) => {
      const tf = new Map<string, number>();
      for (const term of baselineTokens(baselineText(tool))) tf.set(term, (tf.get(term) ?? 0) + 1);
      for (const term of tf.keys()) this.#df.set(term, (this.#df.get(term) ?? 0) + 1);
      return tf;
    });
    this.#length = this.#tf.map((tf) => [...tf.values()].reduce((a, b) => a + b, 0));
    this.#avgLength = this.#length.reduce((a, b) => a + b, 0) / Math.max(1, tools.length);
  }

  static build(tools: readonly SearchableTool[]): BaselineToolIndex {
    return new BaselineToolIndex([...tools]);
  }

  get size(): number {
    return this.#tools.length;
  }

  /** Each query word counts once per occurrence in the query (a repeated word weighs more, as in Lucene). */
  search(query: string, k = 5): ToolHit[] {
    const n = this.#tools.length;
    const terms = baselineTokens(query).filter((t) => this.#df.has(t));
    const idf = new Map(
      terms.map((t) => [t, Math.log(1 + (n - this.#df.get(t)! + 0.5) / (this.#df.get(t)! + 0.5))]),
    );
    const hits: ToolHit[] = [];
    this.#tf.forEach((tf, i) => {
      let score = 0;
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * this.#length[i]!) / this.#avgLength);
      for (const term of terms) {
        const f = tf.get(term);
        if (f) score += (idf.get(term)! * f * (BM25_K1 + 1)) / (f + norm);
      }
      if (score > 0) hits.push({ tool: this.#tools[i]!, score });
    });
    // Stable sort: equal scores keep catalog order, so runs are reproducible.
    return hits.sort((a, b) => b.score - a.score).slice(0, k);
  }
}
