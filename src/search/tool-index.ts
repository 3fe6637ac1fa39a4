import { pushAll } from '../util/arrays.js';
import { Bm25fIndex, type WeightedTerm } from './bm25f.js';
import { bridgeTerms, type VocabularyBridge } from './bridge.js';
import { type RankedList, reciprocalRankFusion, topK } from './fusion.js';
import {
  DEFAULT_RANKING,
  mergeRanking,
  type RankingOptions,
  type RankingOverrides,
  SERVER_FIELDS,
  TOOL_FIELDS,
  type ToolField,
} from './ranking.js';
import { querySegments } from './segments.js';
import { type ServerTerms, ToolTermCache } from './term-cache.js';
import { nameWords, type TokenizeOptions, tokenize } from './tokenize.js';

export { DEFAULT_RANKING, type RankingOptions, type RankingOverrides, type ToolField } from './ranking.js';

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

/** What a server says of itself (its initialize result), ranked with its tools as server evidence. */
export interface ServerProfile {
  title?: string | undefined;
  description?: string | undefined;
  instructions?: string | undefined;
}

/** Why a tool matched: `tack tools search --explain`. */
export interface ToolExplanation {
  /** The query words the tool holds, each with the fields it was found in. */
  terms: Array<{ term: string; fields: ToolField[] }>;
  /** Words that query expansion added (from the best tools, or the vocabulary bridge) and this tool holds. */
  expansion: string[];
  /** What server evidence added to its score (0 when its server did not match). */
  server: number;
  /** Its rank (1-based) in each query's or request step's own list, when it was in it. */
  ranks: Array<{ query: string; rank: number }>;
}

/** One ranked tool, with its score and, when asked, why it matched. */
export interface ToolHit {
  tool: SearchableTool;
  score: number;
  explain?: ToolExplanation;
}

export interface ToolSearchOptions {
  /** What each server says of itself, by server name: its server document's text besides its tools. */
  servers?: Readonly<Record<string, ServerProfile>>;
  /** Parts of the ranking to change; the rest stay `DEFAULT_RANKING`. */
  ranking?: RankingOverrides;
  /**
   * Search terms kept between runs (term-cache.ts): a server whose definitions are unchanged is not tokenized
   * again. The caller writes it (`save()`) once the index is built. (Not the model-token counts of `tack tools`:
   * those are the store's `token_counts`.)
   */
  terms?: ToolTermCache | undefined;
  /**
   * A vocabulary bridge's table (bridge.ts), used when the ranking's `bridge.weight` is above 0 and the table was
   * cut into terms as the ranking cuts them. None ships with tack: its gain on the sets left out did not hold.
   */
  bridge?: VocabularyBridge | undefined;
}

export interface SearchOptions {
  /** Say why each tool matched (`ToolHit.explain`). */
  explain?: boolean;
}

/** Deeper than any real tool schema; stops a self-referencing schema object from recursing forever. */
const MAX_SCHEMA_DEPTH = 8;

/**
 * Parameter names (as words), titles, descriptions and (with `enums`) the values of `enum` and `const` from a
 * JSON Schema, nested objects and array items included: a tool is often found by what it takes (`repository`,
 * `branch`, `"celsius"`) rather than by what its name says.
 */
export function schemaText(schema: unknown, enums = true): string {
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
    if (enums) {
      const values = Array.isArray(record.enum) ? record.enum : 'const' in record ? [record.const] : [];
      for (const value of values) if (typeof value === 'string') parts.push(nameWords(value));
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

/** One ranked tool inside a search, before it becomes a hit. */
interface Scored {
  id: number;
  score: number;
}

/** What a search noticed on the way, for explanations. */
interface Trace {
  terms: Set<string>;
  expansion: Set<string>;
  server: Map<number, number>;
  lists: Array<{ query: string; ids: number[] }>;
}

/** Small dense ids, reused after removal: they index the BM25F index's arrays. */
class Ids {
  #next = 0;
  readonly #free: number[] = [];
  take(): number {
    return this.#free.pop() ?? this.#next++;
  }
  give(id: number): void {
    this.#free.push(id);
  }
}

/**
 * The search index over a catalog of tools. Lexical: BM25 per field (BM25F when the ranking asks) over a tool's
 * name split into words, its title, description, parameters (names, descriptions, enum values), server name and
 * learned examples; English stemmed, stop words dropped, Chinese/Japanese/Korean cut into character pairs. On top
 * of that: server evidence (each server ranked as one document and fused into its tools' scores), query expansion
 * from the best tools (pseudo-relevance feedback), optionally a request of several steps ranked step by step as
 * well, and several queries merged by reciprocal rank fusion. Servers can be replaced one at a time (a `list_changed` re-lists one server)
 * without rebuilding the rest, and a search after a replace scores exactly as a fresh build.
 */
export class ToolSearchIndex {
  readonly ranking: Readonly<RankingOptions>;
  readonly #tokens: TokenizeOptions;
  readonly #nameTokens: TokenizeOptions;
  readonly #toolWeights: number[];
  readonly #serverWeights: number[];
  readonly #tools = new Bm25fIndex(TOOL_FIELDS.length);
  readonly #servers = new Bm25fIndex(SERVER_FIELDS.length);
  readonly #toolIds = new Ids();
  readonly #serverIds = new Ids();
  readonly #toolById = new Map<number, SearchableTool>();
  readonly #serverOfTool = new Map<number, number>();
  readonly #toolsOfServer = new Map<number, number[]>();
  readonly #serverId = new Map<string, number>();
  readonly #cache: ToolTermCache | undefined;
  readonly #bridge: VocabularyBridge | undefined;

  private constructor(ranking: RankingOptions, cache?: ToolTermCache, bridge?: VocabularyBridge) {
    this.ranking = ranking;
    this.#cache = cache;
    // Its terms are only the index's own when both sides were cut the same way.
    this.#bridge =
      bridge &&
      ranking.bridge.weight > 0 &&
      bridge.stem === ranking.stem &&
      bridge.stopWords === ranking.stopWords
        ? bridge
        : undefined;
    this.#tokens = { stem: ranking.stem, stopWords: ranking.stopWords };
    // A name keeps its stop words, so that a query of stop words only (`what can you do`) can still find
    // `what_can_you_do` by the fallback in #queryTerms().
    this.#nameTokens = { ...this.#tokens, stopWords: false };
    this.#toolWeights = TOOL_FIELDS.map((f) => ranking.weights[f]);
    this.#serverWeights = SERVER_FIELDS.map((f) => ranking.server.weights[f]);
  }

  /** Indexes a set of tool definitions with the shipped ranking. */
  static build(tools: readonly SearchableTool[], options: ToolSearchOptions = {}): ToolSearchIndex {
    const index = new ToolSearchIndex(
      mergeRanking(DEFAULT_RANKING, options.ranking),
      options.terms,
      options.bridge,
    );
    const byServer = new Map<string, SearchableTool[]>();
    for (const tool of tools) {
      const list = byServer.get(tool.server);
      if (list) list.push(tool);
      else byServer.set(tool.server, [tool]);
    }
    for (const [server, list] of byServer) index.#add(server, list, options.servers?.[server]);
    return index;
  }

  get size(): number {
    return this.#toolById.size;
  }

  /**
   * Replaces every tool of one server (after its `tools/list_changed`, or a reconnect with new instructions);
   * the other servers stay indexed as they are. Tools whose `server` is another server are ignored.
   */
  replaceServer(server: string, tools: readonly SearchableTool[], profile?: ServerProfile): void {
    this.removeServer(server);
    this.#add(
      server,
      tools.filter((t) => t.server === server),
      profile,
    );
  }

  /** Drops one server's tools from the index. */
  removeServer(server: string): void {
    const sid = this.#serverId.get(server);
    if (sid === undefined) return;
    for (const id of this.#toolsOfServer.get(sid) ?? []) {
      this.#tools.remove(id);
      this.#toolById.delete(id);
      this.#serverOfTool.delete(id);
      this.#toolIds.give(id);
    }
    this.#servers.remove(sid);
    this.#toolsOfServer.delete(sid);
    this.#serverId.delete(server);
    this.#serverIds.give(sid);
  }

  #text(text: string | undefined): string[] {
    return text ? tokenize(text, this.#tokens) : [];
  }

  #add(server: string, tools: readonly SearchableTool[], profile: ServerProfile | undefined): void {
    if (tools.length === 0) return;
    const tokens = this.#tokensOf(server, tools, profile);
    const sid = this.#serverIds.take();
    const ids: number[] = [];
    tools.forEach((tool, i) => {
      const id = this.#toolIds.take();
      this.#tools.add(id, tokens.tools[i]!);
      this.#toolById.set(id, tool);
      this.#serverOfTool.set(id, sid);
      ids.push(id);
    });
    this.#servers.add(sid, tokens.server);
    this.#toolsOfServer.set(sid, ids);
    this.#serverId.set(server, sid);
  }

  /** A server's search terms: from the cache when its definitions are unchanged, else tokenized (and cached). */
  #tokensOf(
    server: string,
    tools: readonly SearchableTool[],
    profile: ServerProfile | undefined,
  ): ServerTerms {
    const { splitNames, params, enums, stem, stopWords } = this.ranking;
    const key = this.#cache
      ? ToolTermCache.key([
          [splitNames, params, enums, stem, stopWords],
          server,
          [profile?.title, profile?.description, profile?.instructions],
          tools.map((t) => [t.name, t.title, t.description, t.inputSchema, t.examples]),
        ])
      : undefined;
    const cached = key === undefined ? undefined : this.#cache?.get(key);
    if (cached && cached.tools.length === tools.length) return cached;
    const serverWords = tokenize(nameWords(server), this.#nameTokens);
    const toolText: string[] = [];
    const toolTokens = tools.map((tool) => {
      const words = nameWords(tool.name);
      // Unsplit (for the ablation), a name is one opaque word, as a plain BM25 index sees it.
      const name = splitNames ? tokenize(words, this.#nameTokens) : [words.replace(/\s+/g, '').toLowerCase()];
      const fields: Record<ToolField, string[]> = {
        name,
        title: this.#text(tool.title),
        description: this.#text(tool.description),
        params: params ? this.#text(schemaText(tool.inputSchema, enums)) : [],
        server: serverWords,
        examples: this.#text((tool.examples ?? []).join(' \n ')),
      };
      toolText.push(words, tool.title ?? '', tool.description ?? '');
      return TOOL_FIELDS.map((f) => fields[f]);
    });
    const tokens: ServerTerms = {
      tools: toolTokens,
      server: [
        [...serverWords, ...this.#text(profile?.title)],
        [...this.#text(profile?.description), ...this.#text(profile?.instructions)],
        this.#text(toolText.join(' \n ')),
      ],
    };
    if (key !== undefined) this.#cache?.set(key, tokens);
    return tokens;
  }

  /** The `k` best tools for a free-text query, best first; an empty list when nothing matches. */
  search(query: string, k = 5, options: SearchOptions = {}): ToolHit[] {
    return this.searchMany([query], k, options);
  }

  /**
   * Several queries (one per capability a task needs), each ranked on its own and merged by reciprocal rank
   * fusion, so every need gets its best tools near the top instead of the strongest need taking all of them.
   */
  searchMany(queries: readonly string[], k = 5, options: SearchOptions = {}): ToolHit[] {
    if (k < 1 || this.#toolById.size === 0) return [];
    const trace: Trace | undefined = options.explain
      ? { terms: new Set(), expansion: new Set(), server: new Map(), lists: [] }
      : undefined;
    const depth = Math.max(k, 20);
    const lists = queries
      .map((query) => ({ query, ranked: this.#rankRequest(query, depth, trace) }))
      .filter((l) => l.ranked.length > 0);
    if (lists.length > 1) for (const list of lists) list.ranked = this.#floor(list.ranked);
    let ranked: Scored[];
    if (lists.length <= 1) ranked = lists[0]?.ranked ?? [];
    else {
      for (const list of lists) trace?.lists.push({ query: list.query, ids: list.ranked.map((s) => s.id) });
      ranked = reciprocalRankFusion(
        lists.map((l) => ({ items: l.ranked.map((s) => s.id) })),
        this.ranking.fusionK,
        this.ranking.fusionMix,
      ).map(({ item, score }) => ({ id: item, score }));
    }
    return ranked.slice(0, k).map(({ id, score }) => {
      const hit: ToolHit = { tool: this.#toolById.get(id)!, score };
      if (trace) hit.explain = this.#explain(id, trace);
      return hit;
    });
  }

  /** One request: ranked whole, and (segments on) step by step too, fused. */
  #rankRequest(query: string, depth: number, trace: Trace | undefined): Scored[] {
    const whole = this.#rankOne(query, depth, trace);
    const { weight } = this.ranking.segments;
    const parts = weight > 0 ? querySegments(query) : [];
    if (parts.length === 0) return whole;
    const lists: Array<RankedList<number>> = [{ items: this.#floor(whole).map((s) => s.id) }];
    for (const part of parts) {
      const ranked = this.#floor(this.#rankOne(part, depth, trace));
      trace?.lists.push({ query: part, ids: ranked.map((s) => s.id) });
      lists.push({ items: ranked.map((s) => s.id), weight });
    }
    return reciprocalRankFusion(lists, this.ranking.fusionK, this.ranking.fusionMix)
      .slice(0, depth)
      .map(({ item, score }) => ({ id: item, score }));
  }

  /** A list cut where its scores fall below `fusionFloor` of its best (it is sorted best first). */
  #floor(ranked: Scored[]): Scored[] {
    const floor = this.ranking.fusionFloor * (ranked[0]?.score ?? 0);
    return floor > 0 ? ranked.filter((s) => s.score >= floor) : ranked;
  }

  /** The query's unique terms; a query of stop words only is taken with them ("what can you do"). */
  #queryTerms(query: string): string[] {
    let terms = tokenize(query, this.#tokens);
    if (terms.length === 0 && this.#tokens.stopWords) terms = tokenize(query, this.#nameTokens);
    return [...new Set(terms)];
  }

  #rankOne(query: string, depth: number, trace: Trace | undefined): Scored[] {
    const terms = this.#queryTerms(query);
    if (terms.length === 0) return [];
    for (const term of terms) trace?.terms.add(term);
    const weighted: WeightedTerm[] = terms.map((term) => ({ term, weight: 1 }));
    if (this.#bridge) {
      const bridged = bridgeTerms(this.#bridge, terms, this.ranking.bridge.weight);
      for (const term of bridged) trace?.expansion.add(term.term);
      pushAll(weighted, bridged);
    }
    const servers = this.#serverScores(weighted);
    const { expansion } = this.ranking;
    const first = this.#pass(weighted, servers, Math.max(depth, expansion.docs), trace);
    if (expansion.weight <= 0 || expansion.terms <= 0 || first.length === 0) return first.slice(0, depth);
    const added = this.#expansionTerms(first.slice(0, expansion.docs), new Set(weighted.map((t) => t.term)));
    if (added.length === 0) return first.slice(0, depth);
    for (const term of added) trace?.expansion.add(term.term);
    return this.#pass([...weighted, ...added], servers, depth, trace);
  }

  /** Each server's score for the query, scaled so the best server has 1; empty when server evidence is off. */
  #serverScores(terms: readonly WeightedTerm[]): Map<number, number> {
    const { server } = this.ranking;
    if (server.weight <= 0 || this.#serverId.size < 2) return new Map();
    const { docs, scores } = this.#servers.score(
      terms,
      this.#serverWeights,
      this.ranking.bm25,
      this.ranking.coordination,
    );
    let best = 0;
    for (const doc of docs) best = Math.max(best, scores[doc]!);
    return new Map(best > 0 ? docs.map((doc) => [doc, scores[doc]! / best]) : []);
  }

  /** One BM25F pass over the tools, server evidence added; the best `depth`. */
  #pass(
    terms: readonly WeightedTerm[],
    servers: ReadonlyMap<number, number>,
    depth: number,
    trace: Trace | undefined,
  ): Scored[] {
    const { bm25, coordination, server } = this.ranking;
    const { docs, scores } = this.#tools.score(terms, this.#toolWeights, bm25, coordination);
    let best = 0;
    for (const doc of docs) best = Math.max(best, scores[doc]!);
    const scale = best > 0 ? 1 / best : 0;
    const evidence = (id: number) =>
      servers.size === 0 ? 0 : server.weight * (servers.get(this.#serverOfTool.get(id)!) ?? 0);
    const final = (id: number) => scores[id]! * scale + evidence(id);
    let candidates: readonly number[] = docs;
    if (servers.size > 0) {
      // The best servers' tools are candidates even when none of their own words matched (their score is 0).
      const extra: number[] = [];
      const top = topK(
        [...servers],
        server.servers,
        ([, score]) => score,
        ([sid]) => sid,
      );
      for (const [sid] of top)
        for (const id of this.#toolsOfServer.get(sid) ?? []) if (scores[id] === 0) extra.push(id);
      if (extra.length > 0) candidates = [...docs, ...extra];
    }
    const chosen = topK(candidates, depth, final, (id) => id);
    if (trace)
      for (const id of chosen) {
        const e = evidence(id);
        if (e > 0) trace.server.set(id, Math.max(trace.server.get(id) ?? 0, e));
      }
    return chosen.map((id) => ({ id, score: final(id) }));
  }

  /**
   * Pseudo-relevance feedback (RM3-like): the words of the best tools' name, title and description, each weighed
   * by how much of its tool it makes up, how good that tool's rank was and how rare the word is; the best few the
   * query does not have already, scaled so the best one weighs `expansion.weight`.
   */
  #expansionTerms(best: readonly Scored[], query: ReadonlySet<string>): WeightedTerm[] {
    const { expansion } = this.ranking;
    const top = best[0]?.score ?? 0;
    if (top <= 0) return [];
    const weights = new Map<string, number>();
    for (const { id, score } of best) {
      const fields = this.#tools.fields(id);
      if (!fields) continue;
      const words = [...(fields[0] ?? []), ...(fields[1] ?? []), ...(fields[2] ?? [])];
      if (words.length === 0) continue;
      const share = score / top / words.length;
      for (const word of words) if (!query.has(word)) weights.set(word, (weights.get(word) ?? 0) + share);
    }
    const scored = [...weights].map(([term, w]) => ({ term, w: w * this.#tools.idf(term) }));
    const chosen = topK(
      scored,
      expansion.terms,
      (t) => t.w,
      () => 0,
    );
    const max = chosen[0]?.w ?? 0;
    if (max <= 0) return [];
    return chosen.map((t) => ({ term: t.term, weight: (expansion.weight * t.w) / max, expansion: true }));
  }

  #explain(id: number, trace: Trace): ToolExplanation {
    const fieldsOf = (term: string) => this.#tools.fieldsWith(id, term).map((f) => TOOL_FIELDS[f]!);
    return {
      terms: [...trace.terms].flatMap((term) => {
        const fields = fieldsOf(term);
        return fields.length ? [{ term, fields }] : [];
      }),
      expansion: [...trace.expansion].filter((term) => fieldsOf(term).length > 0),
      server: Math.round((trace.server.get(id) ?? 0) * 1000) / 1000,
      ranks: trace.lists.flatMap(({ query, ids }) => {
        const at = ids.indexOf(id);
        return at < 0 ? [] : [{ query, rank: at + 1 }];
      }),
    };
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

/** Each server's profile (title, description, instructions) by name, for `ToolSearchOptions.servers`. */
export function serverProfiles(
  servers: ReadonlyArray<{
    name: string;
    instructions?: string | undefined;
    serverInfo?: { title?: string | undefined; description?: string | undefined } | undefined;
  }>,
): Record<string, ServerProfile> {
  return Object.fromEntries(
    servers.map((s) => [
      s.name,
      { title: s.serverInfo?.title, description: s.serverInfo?.description, instructions: s.instructions },
    ]),
  );
}
