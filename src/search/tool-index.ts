import MiniSearch from 'minisearch';
import { nameWords, type TokenizeOptions, tokenize } from './tokenize.js';

/** One tool as search sees it: what a model or a person could ask for it by. */
export interface SearchableTool {
  server: string;
  /** The model-visible name (`mcp__github__create_issue`) or the tool's own name. */
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  /**
   * Requests this tool answered before: search queries after which a session used it (the harness records
   * them). The words people actually use, which a one-line description often lacks ("Dogecoin" for a tool that
   * says "cryptocurrencies").
   */
  examples?: readonly string[];
}

export interface ToolHit {
  tool: SearchableTool;
  score: number;
}

export type ToolField = 'name' | 'title' | 'description' | 'params' | 'server' | 'instructions' | 'examples';
const FIELDS: readonly ToolField[] = [
  'name',
  'title',
  'description',
  'params',
  'server',
  'instructions',
  'examples',
];

/**
 * The parts of the ranking that can be switched off or changed, so the benchmark can show what each one gains
 * (an ablation). `DEFAULT_RANKING` is what measured best on the tune split of MetaTool; what each part gained
 * and what was tried and left out is in docs/tool-search.md.
 */
export interface RankingOptions {
  /** Split names into words (`createIssue`, `create_issue`, `create-issue`) instead of one opaque token. */
  splitNames: boolean;
  /** Porter stems for English words. */
  stem: boolean;
  /** Drop English function words and the conversational wrapper of a request. */
  stopWords: boolean;
  /** Index parameter names and descriptions from the input schema, nested properties included. */
  params: boolean;
  /** Weight of a match in each field, relative to the description. */
  weights: Readonly<Record<ToolField, number>>;
  /** BM25+ parameters (MiniSearch's defaults: k 1.2, b 0.7, d 0.5). */
  bm25: Readonly<{ k: number; b: number; d: number }>;
}

export const DEFAULT_RANKING: Readonly<RankingOptions> = {
  splitNames: true,
  stem: true,
  stopWords: true,
  params: true,
  // name: tuned (3 beat 1, 1.5, 2, 2.5 and 4 on the tune split); the others are not measurable on MetaTool
  // (no titles, schemas, servers or instructions) and are set below the name and description by judgement.
  weights: { name: 3, title: 2, description: 1, params: 0.5, server: 0.5, instructions: 0.2, examples: 1 },
  bm25: { k: 1.2, b: 0.7, d: 0.5 },
};

export interface ToolSearchOptions {
  /** Each server's `instructions` (from its initialize result), indexed as a weak field of its tools. */
  serverInstructions?: Readonly<Record<string, string>>;
  /** Parts of the ranking to change; the rest stay `DEFAULT_RANKING`. */
  ranking?: Partial<RankingOptions>;
}

interface Doc {
  id: number;
  name: string;
  title: string;
  description: string;
  params: string;
  server: string;
  instructions: string;
  examples: string;
}

/** Deeper than any real tool schema; stops a self-referencing schema object from recursing forever. */
const MAX_SCHEMA_DEPTH = 8;

/**
 * Parameter names (as words) and descriptions from a JSON Schema, nested objects and array items included:
 * a tool is often found by what it takes (`repository`, `branch`) rather than by what its name says.
 */
export function schemaText(schema: unknown): string {
  const parts: string[] = [];
  const visit = (node: unknown, depth: number) => {
    if (depth > MAX_SCHEMA_DEPTH || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    if (depth > 0) {
      if (typeof record.title === 'string') parts.push(record.title);
      if (typeof record.description === 'string') parts.push(record.description);
    }
    const properties = record.properties;
    if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
      for (const [key, child] of Object.entries(properties)) {
        parts.push(nameWords(key));
        visit(child, depth + 1);
      }
    }
    for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties'] as const)
      visit(record[key], depth + 1);
  };
  visit(schema, 0);
  return parts.join(' \n ');
}

/** Query terms are already whole (tokenize() made them): MiniSearch must not split or lower-case them again. */
const TERMS = { tokenize: (text: string) => text.split(' '), processTerm: (term: string) => term };

/**
 * The search index over a catalog of tools: BM25 (MiniSearch) over a tool's name split into words, its title,
 * description and parameters, and its server's name and instructions, each field with its own weight; English
 * stemmed, stop words dropped, Chinese/Japanese/Korean cut into character pairs. Servers can be replaced one
 * at a time (a `list_changed` re-lists one server) without rebuilding the rest.
 */
export class ToolSearchIndex {
  readonly #ranking: RankingOptions;
  readonly #tokens: TokenizeOptions;
  readonly #index: MiniSearch<Doc>;
  readonly #tools = new Map<number, SearchableTool>();
  /** The indexed documents of each server: MiniSearch removes a document by re-reading its fields. */
  readonly #docsOfServer = new Map<string, Doc[]>();
  #nextId = 0;

  private constructor(ranking: RankingOptions) {
    this.#ranking = ranking;
    const tokens: TokenizeOptions = { stem: ranking.stem, stopWords: ranking.stopWords };
    this.#tokens = tokens;
    const nameTokens: TokenizeOptions = { ...tokens, stopWords: false };
    this.#index = new MiniSearch<Doc>({
      fields: [...FIELDS],
      // A name keeps its stop words, so that a query of stop words only (`what can you do`) can still find
      // `what_can_you_do` by the fallback in search().
      tokenize: (text, field) => tokenize(text, field === 'name' ? nameTokens : tokens),
      processTerm: TERMS.processTerm,
      searchOptions: { ...TERMS, boost: { ...ranking.weights }, bm25: { ...ranking.bm25 } },
    });
  }

  static build(tools: readonly SearchableTool[], options: ToolSearchOptions = {}): ToolSearchIndex {
    const index = new ToolSearchIndex({ ...DEFAULT_RANKING, ...options.ranking });
    const byServer = new Map<string, SearchableTool[]>();
    for (const tool of tools) {
      const list = byServer.get(tool.server);
      if (list) list.push(tool);
      else byServer.set(tool.server, [tool]);
    }
    for (const [server, list] of byServer) index.#add(server, list, options.serverInstructions?.[server]);
    return index;
  }

  get size(): number {
    return this.#tools.size;
  }

  /**
   * Replaces every tool of one server (after its `tools/list_changed`, or a reconnect with new instructions);
   * the other servers stay indexed as they are. Tools whose `server` is another server are ignored.
   */
  replaceServer(server: string, tools: readonly SearchableTool[], instructions?: string): void {
    this.removeServer(server);
    this.#add(
      server,
      tools.filter((t) => t.server === server),
      instructions,
    );
  }

  removeServer(server: string): void {
    const docs = this.#docsOfServer.get(server);
    if (!docs) return;
    // remove(), not discard(): a discarded document still counts in the term frequencies until a vacuum, which
    // would rank the rest of the catalog differently after a list_changed than after a fresh build.
    this.#index.removeAll(docs);
    for (const doc of docs) this.#tools.delete(doc.id);
    this.#docsOfServer.delete(server);
  }

  #add(server: string, tools: readonly SearchableTool[], instructions: string | undefined): void {
    if (tools.length === 0) return;
    const { splitNames, params } = this.#ranking;
    const serverWords = nameWords(server);
    const docs: Doc[] = [];
    for (const tool of tools) {
      const id = this.#nextId++;
      this.#tools.set(id, tool);
      const words = nameWords(tool.name);
      docs.push({
        id,
        // Unsplit (for the ablation), a name is one opaque word, as a plain BM25 index sees it.
        name: splitNames ? words : words.replace(/\s+/g, '').toLowerCase(),
        title: tool.title ?? '',
        description: tool.description ?? '',
        params: params ? schemaText(tool.inputSchema) : '',
        server: serverWords,
        instructions: instructions ?? '',
        examples: (tool.examples ?? []).join(' \n '),
      });
    }
    this.#index.addAll(docs);
    this.#docsOfServer.set(server, docs);
  }

  /** The `k` best tools for a free-text query, best first; an empty list when nothing matches. */
  search(query: string, k = 5): ToolHit[] {
    if (k < 1 || this.#tools.size === 0) return [];
    let terms = tokenize(query, this.#tokens);
    // A query of stop words only ("what can you do") still deserves an answer.
    if (terms.length === 0 && this.#tokens.stopWords)
      terms = tokenize(query, { ...this.#tokens, stopWords: false });
    if (terms.length === 0) return [];
    return this.#index
      .search(terms.join(' '))
      .slice(0, k)
      .map((r) => ({ tool: this.#tools.get(r.id as number)!, score: r.score }));
  }
}

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

/** A catalog entry (the host's model-visible name, its server, the server's definition) as search sees it. */
export function searchableTool(
  name: string,
  server: string,
  definition: { title?: string | undefined; description?: string | undefined; inputSchema?: unknown },
): SearchableTool {
  return {
    server,
    name,
    ...(definition.title ? { title: definition.title } : {}),
    ...(definition.description ? { description: definition.description } : {}),
    inputSchema: definition.inputSchema,
  };
}

/** Each server's instructions by name, for `ToolSearchOptions.serverInstructions`. */
export function instructionsByServer(
  servers: ReadonlyArray<{ name: string; instructions?: string | undefined }>,
): Record<string, string> {
  return Object.fromEntries(servers.flatMap((s) => (s.instructions ? [[s.name, s.instructions]] : [])));
}
