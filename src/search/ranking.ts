/**
 * The parts of tool search's ranking that can be switched off or changed, so the benchmark can show what each
 * one gains (an ablation) and choose the values on some data sets while reporting on another (leave one data
 * set out). `DEFAULT_RANKING` holds the values chosen that way; docs/tool-search.md says how and shows the
 * figures.
 */

export type ToolField = 'name' | 'title' | 'description' | 'params' | 'server' | 'examples';
export const TOOL_FIELDS: readonly ToolField[] = [
  'name',
  'title',
  'description',
  'params',
  'server',
  'examples',
];

/** A server as one document: its name, what it says of itself, and the text of all its tools. */
export type ServerField = 'name' | 'about' | 'tools';
export const SERVER_FIELDS: readonly ServerField[] = ['name', 'about', 'tools'];

export interface RankingOptions {
  /** Split names into words (`createIssue`, `create_issue`, `create-issue`) instead of one opaque token. */
  splitNames: boolean;
  /** Porter stems for English words. */
  stem: boolean;
  /** Drop English function words and the conversational wrapper of a request. */
  stopWords: boolean;
  /** Index parameter names and descriptions from the input schema, nested properties included. */
  params: boolean;
  /** Index the values of `enum` and `const` in the input schema (`"celsius"`, `"markdown"`). */
  enums: boolean;
  /** BM25F weight of a match in each field of a tool, relative to the description. */
  weights: Readonly<Record<ToolField, number>>;
  /**
   * Saturation (k1), length normalisation (b), and whether fields are saturated jointly (BM25F) or each on its
   * own and added (per-field BM25, as MiniSearch and tack before it did).
   */
  bm25: Readonly<{ k1: number; b: number; saturation: 'joint' | 'per-field' }>;
  /**
   * A tool's score times (query terms it matched / query terms) to this power: 0 off, 1 linear. Long requests
   * hold many words; one frequent word matched should not beat three.
   */
  coordination: number;
  /**
   * Server evidence: each server is ranked as one document (its name, title, description, instructions and all
   * its tools' text), and a tool's score gets `weight` times its server's score (both scaled to the best one)
   * added. The tools of the `servers` best servers are candidates even when none of their own words matched, so
   * "save this to my notes" reaches a notes server whose tools say "create" and "append". weight 0: off.
   */
  server: Readonly<{ weight: number; servers: number; weights: Readonly<Record<ServerField, number>> }>;
  /**
   * Pseudo-relevance feedback: the `terms` most telling words of the `docs` best tools (name, title,
   * description) are added to the query at `weight` (the best one; the rest in proportion), and it is ranked
   * again. weight 0: off.
   */
  expansion: Readonly<{ docs: number; terms: number; weight: number }>;
  /**
   * A request of several steps (querySegments) is also ranked step by step, each step's list counting `weight`
   * against the whole request's 1 in reciprocal rank fusion. weight 0: off.
   */
  segments: Readonly<{ weight: number }>;
  /**
   * The vocabulary bridge (bridge.ts): tool words a learned table associates with the query's words join the
   * query, the likeliest at `weight` (a literal word weighs 1). weight 0: off.
   */
  bridge: Readonly<{ weight: number }>;
  /** Reciprocal rank fusion's k: how much the lists' top ranks dominate (small k: more). */
  fusionK: number;
  /**
   * Before fusion, each list (a query's, a request step's) keeps only the tools scoring at least this share of
   * its best one: a tool that weakly matches every capability must not outrank each capability's best tool by
   * appearing in every list. 0: keep all.
   */
  fusionFloor: number;
  /**
   * How lists of different needs (queries, request steps) add up: a tool's best list counts fully, each other
   * list it is in `fusionMix` times (1: plain reciprocal rank fusion, 0: its best list only).
   */
  fusionMix: number;
}

/**
 * What the benchmark's tuning chose on all four retrieval sets (bench/tool-retrieval/lodo.ts, `npm run bench --
 * tool-search`, which reports whether this is still its result), after the feature table of issue 32 took out
 * the parts that did not gain on the sets left out (means per query): field weights (every field counts 1),
 * BM25F's joint saturation (fields saturate each on its own), coordination and request steps. Their switches stay
 * so that the benchmark can keep measuring them. From the prior, tuning moved query expansion to the 2 best tools
 * and fusion k to 10. The figures are in docs/tool-search.md.
 */
export const DEFAULT_RANKING: Readonly<RankingOptions> = {
  splitNames: true,
  stem: true,
  stopWords: true,
  params: true,
  enums: true,
  weights: { name: 1, title: 1, description: 1, params: 1, server: 1, examples: 1 },
  bm25: { k1: 1.2, b: 0.75, saturation: 'per-field' },
  coordination: 0,
  server: { weight: 0.3, servers: 3, weights: { name: 3, about: 1, tools: 0.5 } },
  expansion: { docs: 2, terms: 8, weight: 0.3 },
  segments: { weight: 0 },
  bridge: { weight: 0 },
  fusionK: 10,
  fusionFloor: 0.1,
  fusionMix: 0.25,
};

/** Any part of a ranking, nested objects included, to lay over another one (`mergeRanking`). */
export interface RankingOverrides
  extends Partial<Omit<RankingOptions, 'weights' | 'bm25' | 'server' | 'expansion' | 'segments' | 'bridge'>> {
  weights?: Partial<Record<ToolField, number>>;
  bm25?: Partial<RankingOptions['bm25']>;
  server?: Partial<Omit<RankingOptions['server'], 'weights'>> & {
    weights?: Partial<Record<ServerField, number>>;
  };
  expansion?: Partial<RankingOptions['expansion']>;
  segments?: Partial<RankingOptions['segments']>;
  bridge?: Partial<RankingOptions['bridge']>;
}

/** `partial` over `base`, nested objects merged key by key. */
export function mergeRanking(base: Readonly<RankingOptions>, partial: RankingOverrides = {}): RankingOptions {
  return {
    ...base,
    ...partial,
    weights: { ...base.weights, ...partial.weights },
    bm25: { ...base.bm25, ...partial.bm25 },
    server: {
      ...base.server,
      ...partial.server,
      weights: { ...base.server.weights, ...partial.server?.weights },
    },
    expansion: { ...base.expansion, ...partial.expansion },
    segments: { ...base.segments, ...partial.segments },
    bridge: { ...base.bridge, ...partial.bridge },
  };
}
