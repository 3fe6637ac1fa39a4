import { readFileSync } from 'node:fs';
import { errorMessage, TackError } from '../../src/errors.js';
import { reciprocalRankFusion } from '../../src/search/fusion.js';
import { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from '../../src/search/meta-tools.js';
import {
  mergeRanking,
  type RankingOptions,
  type RankingOverrides,
  TOOL_FIELDS,
  type ToolField,
} from '../../src/search/ranking.js';
import { capabilityClauses } from '../../src/search/segments.js';
import {
  type SearchableTool,
  type ServerProfile,
  type ToolHit,
  ToolSearchIndex,
  type ToolSearchOptions,
} from '../../src/search/tool-index.js';
import { minOf } from '../../src/util/arrays.js';
import { BaselineToolIndex } from './baseline.js';

/**
 * Offline retrieval benchmarks for tool search (bench/tool-retrieval/report.ts, bench/tool-search.ts): a catalog
 * (tools.json) and labelled queries (queries.jsonl), scored for tack's index and the plain BM25 baseline, and
 * what the catalog costs in context inline and deferred. Formats: docs/tool-search.md.
 */

export interface RetrievalQuery {
  query: string;
  /** `server/tool`, or a bare tool name that matches that name on any server. */
  gold: string[];
  /**
   * The task split into one short query per capability it needs (as a model would call search_tools with
   * `queries`). Without it, the benchmark cuts the query into clauses (capabilityClauses).
   */
  queries?: string[];
}

export interface RetrievalMetrics {
  queries: number;
  /** Share of queries with at least one gold tool in the top k. */
  hitAt: Record<number, number>;
  /** Mean share of a query's gold tools in the top k. */
  recallAt: Record<number, number>;
  /** Mean reciprocal rank of the first gold tool within the deepest k (0 when none is there). */
  mrr: number;
}

export interface Searcher {
  search(query: string, k?: number): ToolHit[];
  /** Several queries merged into one ranking; without it, they are merged by reciprocal rank fusion here. */
  searchMany?(queries: readonly string[], k?: number): ToolHit[];
}

/** What a query is searched with: the task text as one query, or the task split into capability queries. */
export type QueryMode = 'task' | 'split';

/**
 * A task's capability queries: its own `queries`, else its clauses as capabilityClauses cuts them (sentences,
 * connectives, commas and "and": rules fixed before any data set was read), else the task itself.
 */
export function capabilityQueries(query: RetrievalQuery): string[] {
  if (query.queries && query.queries.length > 0) return query.queries;
  const parts = capabilityClauses(query.query);
  return parts.length > 0 ? parts : [query.query];
}

export function rankFor(
  index: Searcher,
  query: RetrievalQuery,
  depth: number,
  mode: QueryMode,
): SearchableTool[] {
  if (mode === 'task') return index.search(query.query, depth).map((h) => h.tool);
  const queries = capabilityQueries(query);
  if (index.searchMany) return index.searchMany(queries, depth).map((h) => h.tool);
  return reciprocalRankFusion(
    queries.map((q) => ({ items: index.search(q, Math.max(depth, 20)).map((h) => h.tool) })),
  )
    .slice(0, depth)
    .map((r) => r.item);
}

function invalid(file: string, where: string, message: string, path?: string): TackError {
  return new TackError('USAGE', `${file}${where}: ${message}`, {
    subject: path === undefined ? { file } : { file, path },
    hint: 'see docs/tool-search.md for the tools.json and queries.jsonl formats',
  });
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new TackError('USAGE', `cannot read ${file}: ${errorMessage(error)}`, { subject: { file } });
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A catalog as tools.json holds it: the tools, and what each server says of itself (server evidence). */
export interface CatalogFile {
  tools: SearchableTool[];
  servers: Record<string, ServerProfile>;
}

/** tools.json: an array of `{server, name, description, inputSchema?, title?}`. */
export function loadToolsFile(file: string): SearchableTool[] {
  return loadCatalogFile(file).tools;
}

/**
 * tools.json as an array of tools, or `{"servers": {"<name>": {title?, description?, instructions?}}, "tools":
 * [...]}` when the servers describe themselves.
 */
export function loadCatalogFile(file: string): CatalogFile {
  let data: unknown;
  try {
    data = JSON.parse(readText(file));
  } catch (error) {
    if (TackError.isInstance(error)) throw error;
    throw invalid(file, '', `not valid JSON (${errorMessage(error)})`);
  }
  const servers: Record<string, ServerProfile> = {};
  if (isRecord(data) && Array.isArray(data.tools)) {
    const profiles = data.servers ?? {};
    if (!isRecord(profiles))
      throw invalid(file, '', '"servers" must be an object of server profiles', 'servers');
    for (const [name, profile] of Object.entries(profiles)) {
      if (!isRecord(profile))
        throw invalid(file, '', `servers.${name}: expected an object`, `servers.${name}`);
      const entry: ServerProfile = {};
      for (const key of ['title', 'description', 'instructions'] as const) {
        const value = profile[key];
        if (value === undefined) continue;
        if (typeof value !== 'string')
          throw invalid(file, '', `servers.${name}: "${key}" must be a string`, `servers.${name}.${key}`);
        entry[key] = value;
      }
      servers[name] = entry;
    }
    data = data.tools;
  }
  if (!Array.isArray(data)) throw invalid(file, '', 'expected an array of tools, or {"servers", "tools"}');
  return { tools: toolsOf(file, data), servers };
}

function toolsOf(file: string, data: unknown[]): SearchableTool[] {
  return data.map((entry, i): SearchableTool => {
    const at = ` tool [${i}]`;
    if (!isRecord(entry)) throw invalid(file, at, 'expected an object', `[${i}]`);
    for (const key of ['server', 'name'] as const)
      if (typeof entry[key] !== 'string' || entry[key] === '')
        throw invalid(file, at, `"${key}" must be a non-empty string`, `[${i}].${key}`);
    for (const key of ['description', 'title'] as const)
      if (entry[key] !== undefined && typeof entry[key] !== 'string')
        throw invalid(file, at, `"${key}" must be a string`, `[${i}].${key}`);
    if (entry.inputSchema !== undefined && !isRecord(entry.inputSchema))
      throw invalid(file, at, '"inputSchema" must be a JSON Schema object', `[${i}].inputSchema`);
    const tool: SearchableTool = { server: entry.server as string, name: entry.name as string };
    if (entry.title !== undefined) tool.title = entry.title as string;
    tool.description = (entry.description as string | undefined) ?? '';
    if (entry.inputSchema !== undefined) tool.inputSchema = entry.inputSchema;
    return tool;
  });
}

/** queries.jsonl: one `{query, gold: ["server/tool" | "tool", ...]}` per line; blank lines are skipped. */
export function loadQueriesFile(file: string): RetrievalQuery[] {
  const queries: RetrievalQuery[] = [];
  readText(file)
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const at = `:${i + 1}`;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch (error) {
        throw invalid(file, at, `not valid JSON (${errorMessage(error)})`);
      }
      if (!isRecord(entry)) throw invalid(file, at, 'expected an object {query, gold}');
      if (typeof entry.query !== 'string' || entry.query.trim() === '')
        throw invalid(file, at, '"query" must be a non-empty string');
      const gold = entry.gold;
      if (!Array.isArray(gold) || gold.length === 0 || !gold.every((g) => typeof g === 'string' && g !== ''))
        throw invalid(file, at, '"gold" must be a non-empty array of "server/tool" or "tool" strings');
      const split = entry.queries;
      if (
        split !== undefined &&
        (!Array.isArray(split) ||
          split.length === 0 ||
          !split.every((q) => typeof q === 'string' && q.trim() !== ''))
      )
        throw invalid(file, at, '"queries" must be a non-empty array of non-empty strings');
      queries.push({
        query: entry.query,
        gold: gold as string[],
        ...(split ? { queries: split as string[] } : {}),
      });
    });
  if (queries.length === 0) throw invalid(file, '', 'no queries');
  return queries;
}

/**
 * Which catalog tools one gold entry names: `server/tool` when the part before the first `/` is a server of the
 * catalog (a tool name may itself contain `/`), otherwise every tool of that name on any server.
 */
export function goldMatcher(
  tools: readonly SearchableTool[],
): (gold: string) => (tool: SearchableTool) => boolean {
  const servers = new Set(tools.map((t) => t.server));
  return (gold) => {
    const slash = gold.indexOf('/');
    if (slash > 0 && servers.has(gold.slice(0, slash))) {
      const server = gold.slice(0, slash);
      const name = gold.slice(slash + 1);
      return (tool) => tool.server === server && tool.name === name;
    }
    return (tool) => tool.name === gold;
  };
}

/**
 * Hit@k, Recall@k and MRR of a searcher over labelled queries. Each query is searched once, for the deepest k;
 * MRR counts ranks within that depth. With `catalog`, a gold entry's prefix is a server only if the catalog has
 * that server (so a tool name may contain `/`); without it, an entry matches a tool whose name or `server/name`
 * it equals.
 */
export function evaluate(
  index: Searcher,
  queries: readonly RetrievalQuery[],
  ks: readonly number[],
  catalog?: readonly SearchableTool[],
  mode: QueryMode = 'task',
): RetrievalMetrics {
  const sortedKs = [...new Set(ks)].sort((a, b) => a - b);
  if (sortedKs.length === 0 || sortedKs.some((k) => !Number.isInteger(k) || k < 1))
    throw new TackError('USAGE', `k must be positive integers, got ${ks.join(',')}`);
  const depth = sortedKs.at(-1)!;
  const match = catalog
    ? goldMatcher(catalog)
    : (gold: string) => (tool: SearchableTool) =>
        gold === tool.name || gold === `${tool.server}/${tool.name}`;
  const hits = Object.fromEntries(sortedKs.map((k) => [k, 0])) as Record<number, number>;
  const recalls = Object.fromEntries(sortedKs.map((k) => [k, 0])) as Record<number, number>;
  let reciprocal = 0;
  for (const query of queries) {
    const { gold } = query;
    const ranked = rankFor(index, query, depth, mode);
    const golds = [...new Set(gold)].map(match);
    // The rank (1-based) at which each gold entry is first found, Infinity when it is not.
    const ranks = golds.map((isGold) => {
      const at = ranked.findIndex(isGold);
      return at < 0 ? Number.POSITIVE_INFINITY : at + 1;
    });
    const first = minOf(ranks);
    if (Number.isFinite(first)) reciprocal += 1 / first;
    for (const k of sortedKs) {
      const found = ranks.filter((r) => r <= k).length;
      if (found > 0) hits[k]! += 1;
      recalls[k]! += found / golds.length;
    }
  }
  const n = queries.length;
  const mean = (sums: Record<number, number>) =>
    Object.fromEntries(sortedKs.map((k) => [k, n === 0 ? 0 : sums[k]! / n])) as Record<number, number>;
  return { queries: n, hitAt: mean(hits), recallAt: mean(recalls), mrr: n === 0 ? 0 : reciprocal / n };
}

/**
 * A part of the ranking that can be switched off: whether a ranking has it, what takes it out, and what puts it
 * back (at the value judged sensible before any data set was read) when a ranking lacks it.
 */
export interface RankingFeature {
  name: string;
  has: (ranking: Readonly<RankingOptions>) => boolean;
  off: RankingOverrides;
  on: RankingOverrides;
}

const UNWEIGHTED: Record<ToolField, number> = {
  name: 1,
  title: 1,
  description: 1,
  params: 1,
  server: 1,
  examples: 1,
};

/** Every switch of ranking.ts, as the feature table and the ablations take them out one at a time. */
export const RANKING_FEATURES: readonly RankingFeature[] = [
  {
    name: 'identifier splitting',
    has: (r) => r.splitNames,
    off: { splitNames: false },
    on: { splitNames: true },
  },
  { name: 'stemming', has: (r) => r.stem, off: { stem: false }, on: { stem: true } },
  { name: 'stop words', has: (r) => r.stopWords, off: { stopWords: false }, on: { stopWords: true } },
  {
    name: 'parameters',
    has: (r) => r.params && r.weights.params > 0,
    off: { params: false },
    on: { params: true, weights: { params: 0.5 } },
  },
  { name: 'enum values', has: (r) => r.enums, off: { enums: false }, on: { enums: true } },
  {
    name: 'field weights',
    has: (r) => TOOL_FIELDS.some((f) => r.weights[f] !== 1),
    off: { weights: UNWEIGHTED },
    on: { weights: { name: 3, title: 2, description: 1, params: 0.5, server: 0.5, examples: 1 } },
  },
  {
    name: 'BM25F joint saturation',
    has: (r) => r.bm25.saturation === 'joint',
    off: { bm25: { saturation: 'per-field' } },
    on: { bm25: { saturation: 'joint' } },
  },
  { name: 'coordination', has: (r) => r.coordination > 0, off: { coordination: 0 }, on: { coordination: 1 } },
  {
    name: 'server evidence',
    has: (r) => r.server.weight > 0,
    off: { server: { weight: 0 } },
    on: { server: { weight: 0.3 } },
  },
  {
    name: 'query expansion',
    has: (r) => r.expansion.weight > 0 && r.expansion.terms > 0,
    off: { expansion: { weight: 0 } },
    on: { expansion: { weight: 0.3, terms: 8 } },
  },
  {
    name: 'request steps',
    has: (r) => r.segments.weight > 0,
    off: { segments: { weight: 0 } },
    on: { segments: { weight: 0.5 } },
  },
  {
    name: 'vocabulary bridge',
    has: (r) => r.bridge.weight > 0,
    off: { bridge: { weight: 0 } },
    on: { bridge: { weight: 0.25 } },
  },
  {
    name: 'fusion guards',
    has: (r) => r.fusionFloor > 0 || r.fusionMix < 1,
    off: { fusionFloor: 0, fusionMix: 1 },
    on: { fusionFloor: 0.1, fusionMix: 0.25 },
  },
];

/** `ranking` with `feature` switched on or off (nested values merged). */
export function withFeature(
  ranking: Readonly<RankingOptions>,
  feature: RankingFeature,
  on: boolean,
): RankingOptions {
  if (feature.has(ranking) === on) return mergeRanking(ranking);
  return mergeRanking(ranking, on ? feature.on : feature.off);
}

/**
 * The parts of a ranking the benchmark changes one at a time (each row: tack without that part), so a table
 * shows what each gains on the data at hand. A part the ranking has switched off already is switched on at its
 * prior value instead (the row then says "with").
 */
export function ablationsFor(ranking: Readonly<RankingOptions>): Record<string, RankingOverrides> {
  return Object.fromEntries(
    RANKING_FEATURES.map((f) => (f.has(ranking) ? [`without ${f.name}`, f.off] : [`with ${f.name}`, f.on])),
  );
}

export interface RetrievalRows {
  tack: RetrievalMetrics;
  /** tack with one part switched off (or on), by the names ablationsFor gives. */
  ablations: Record<string, RetrievalMetrics>;
  baseline: RetrievalMetrics;
}

export interface RetrievalComparison extends RetrievalRows {
  tools: number;
  /** The same with each task split into capability queries (capabilityQueries). */
  split: RetrievalRows;
  /** Gold entries that name no tool of the catalog (counted as misses): usually a typo in the queries file. */
  unknownGold: string[];
}

/**
 * tack's index, each ablation and the plain BM25 baseline on the same catalog and queries: with the task text as
 * the query, and with the task split into capability queries.
 */
export function compareRetrieval(
  tools: readonly SearchableTool[],
  queries: readonly RetrievalQuery[],
  ks: readonly number[],
  options: ToolSearchOptions = {},
): RetrievalComparison {
  const match = goldMatcher(tools);
  const byName = new Map<string, SearchableTool[]>();
  for (const tool of tools) {
    const list = byName.get(tool.name);
    if (list) list.push(tool);
    else byName.set(tool.name, [tool]);
  }
  // A gold entry can only be the tool named by all of it or by what follows its first `/`.
  const unknownGold = [...new Set(queries.flatMap((q) => q.gold))].filter((gold) => {
    const isGold = match(gold);
    const names = [gold, gold.slice(gold.indexOf('/') + 1)];
    return !names.some((name) => byName.get(name)?.some(isGold));
  });
  const tack = ToolSearchIndex.build(tools, options);
  const variants = Object.entries(ablationsFor(tack.ranking)).map(([name, ranking]) => ({
    name,
    index: ToolSearchIndex.build(tools, { ...options, ranking: mergeRanking(tack.ranking, ranking) }),
  }));
  const baseline = BaselineToolIndex.build(tools);
  const rows = (mode: QueryMode): RetrievalRows => ({
    tack: evaluate(tack, queries, ks, tools, mode),
    ablations: Object.fromEntries(variants.map((v) => [v.name, evaluate(v.index, queries, ks, tools, mode)])),
    baseline: evaluate(baseline, queries, ks, tools, mode),
  });
  return { tools: tools.length, ...rows('task'), split: rows('split'), unknownGold };
}

export type TokenCounter = (text: string) => number | Promise<number>;

/** A tool definition as a provider is sent it (the same compact form `tack tools` counts). */
export function definitionText(tool: {
  name: string;
  description?: string | undefined;
  inputSchema?: unknown;
}): string {
  return JSON.stringify({
    name: tool.name,
    description: tool.description ?? '',
    input_schema: tool.inputSchema ?? { type: 'object', properties: {} },
  });
}

/** `mcp__<server>__<tool>` unless the name is already model-visible. */
function visibleName(tool: SearchableTool): string {
  return tool.name.startsWith('mcp__') ? tool.name : `mcp__${tool.server}__${tool.name}`;
}

export interface ContextCost {
  tools: number;
  /** Every definition sent every turn. */
  inlineTokens: number;
  /** Deferred, idle turn: only search_tools and call_tool. */
  deferredIdleTokens: number;
  /** deferredIdleTokens / inlineTokens. */
  deferredIdleShare: number;
  /** Deferred with `loaded` tools found and loaded: the meta-tools plus `loaded` average definitions. */
  deferredLoadedTokens: number;
  /** The same with the `loaded` largest definitions: the worst case. */
  deferredLoadedMaxTokens: number;
  loaded: number;
  /** Mean tokens of one definition. */
  meanToolTokens: number;
}

/**
 * What a catalog's definitions cost per turn inline vs deferred. The counter is passed in (tack's is
 * tokens/count.ts `countTokens`, the Qwen3 tokenizer) since this layer may not import the tokenizer.
 */
export async function contextCost(
  tools: readonly SearchableTool[],
  countTokens: TokenCounter,
  options: { loaded?: number } = {},
): Promise<ContextCost> {
  const loaded = Math.min(options.loaded ?? 5, tools.length);
  const perTool: number[] = [];
  for (const tool of tools)
    perTool.push(await countTokens(definitionText({ ...tool, name: visibleName(tool) })));
  const meta =
    (await countTokens(definitionText(SEARCH_TOOLS_DEFINITION))) +
    (await countTokens(definitionText(CALL_TOOL_DEFINITION)));
  const inline = perTool.reduce((a, b) => a + b, 0);
  const mean = tools.length === 0 ? 0 : inline / tools.length;
  const largest = [...perTool].sort((a, b) => b - a).slice(0, loaded);
  return {
    tools: tools.length,
    inlineTokens: inline,
    deferredIdleTokens: meta,
    deferredIdleShare: inline === 0 ? 0 : meta / inline,
    deferredLoadedTokens: Math.round(meta + loaded * mean),
    deferredLoadedMaxTokens: meta + largest.reduce((a, b) => a + b, 0),
    loaded,
    meanToolTokens: mean,
  };
}
