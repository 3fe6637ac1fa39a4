import MiniSearch from 'minisearch';
import type { SearchableTool, ToolHit } from '../../src/search/tool-index.js';

/**
 * The baseline tool search is measured against: plain BM25 over the name and description as MiniSearch
 * does it out of the box (its tokenizer and lower-casing, no stemming, no weights, no expansion).
 */
export class BaselineToolIndex {
  readonly #index: MiniSearch<{ id: number; name: string; description: string }>;
  readonly #tools: readonly SearchableTool[];

  private constructor(tools: readonly SearchableTool[]) {
    this.#tools = tools;
    this.#index = new MiniSearch({ fields: ['name', 'description'] });
    this.#index.addAll(tools.map((t, id) => ({ id, name: t.name, description: t.description ?? '' })));
  }

  static build(tools: readonly SearchableTool[]): BaselineToolIndex {
    return new BaselineToolIndex([...tools]);
  }

  get size(): number {
    return this.#tools.length;
  }

  search(query: string, k = 5): ToolHit[] {
    return this.#index
      .search(query)
      .slice(0, k)
      .map((r) => ({ tool: this.#tools[r.id as number]!, score: r.score }));
  }
}
