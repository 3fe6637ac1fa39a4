import type { VocabularyBridge } from '../../src/search/bridge.js';
import { mergeRanking, type RankingOptions } from '../../src/search/ranking.js';
import { type SearchableTool, ToolSearchIndex } from '../../src/search/tool-index.js';
import { mulberry32 } from '../random.js';
import { round } from '../util.js';
import { type BridgeSet, type BridgeTrainOptions, trainBridge } from './bridge-train.js';
import { goldMatcher, type QueryMode, type RetrievalQuery, rankFor, type Searcher } from './metrics.js';

/**
 * The vocabulary bridge left out as the ranking is: for each set, a table trained on the other sets only (and
 * only on those whose licence lets a table learned from them ship: `trainable`), scored on the set left out with
 * the bridge and without it, every other part of the ranking the same. Per query, so that the difference gets a
 * bootstrap interval (queries resampled within each set, the sets weighted by their queries as in the means).
 */

/** The sets a shipped table may learn from: MIT-licensed ones. ToolLens states no licence (evaluation only). */
export const TRAINABLE = new Set(['metatool', 'restbench', 'taubench', 'apibench']);

/** The weight judged sensible before any run (that of query expansion's prior): a literal word weighs 1. */
export const BRIDGE_WEIGHT = 0.25;

interface EvalSet extends BridgeSet {
  servers: Record<string, { title?: string; description?: string; instructions?: string }>;
}

/** Per query: task Hit@5, task Recall@10, split Recall@5, and their mean (the tuning's objective). */
type PerQuery = Float64Array;

function perQuery(index: Searcher, queries: readonly RetrievalQuery[], tools: readonly SearchableTool[]) {
  const match = goldMatcher(tools);
  const found = (q: RetrievalQuery, mode: QueryMode, k: number) => {
    const ranked = rankFor(index, q, 10, mode).slice(0, k);
    const golds = [...new Set(q.gold)].map(match);
    return golds.filter((g) => ranked.some(g)).length / golds.length;
  };
  const hit5 = new Float64Array(queries.length);
  const recall10 = new Float64Array(queries.length);
  const split5 = new Float64Array(queries.length);
  queries.forEach((q, i) => {
    hit5[i] = found(q, 'task', 5) > 0 ? 1 : 0;
    recall10[i] = found(q, 'task', 10);
    split5[i] = found(q, 'split', 5);
  });
  return { hit5, recall10, split5 };
}

type Scores = ReturnType<typeof perQuery>;
const METRICS = ['hit5', 'recall10', 'split5'] as const;

const mean = (a: PerQuery) => a.reduce((s, x) => s + x, 0) / Math.max(1, a.length);

function summary(s: Scores) {
  const m = Object.fromEntries(METRICS.map((k) => [k, mean(s[k])])) as Record<
    (typeof METRICS)[number],
    number
  >;
  return { ...m, objective: (m.hit5 + m.recall10 + m.split5) / 3 };
}

type Summary = ReturnType<typeof summary>;

const rounded = (s: Summary) =>
  Object.fromEntries(Object.entries(s).map(([k, v]) => [k, round(v, 4)])) as Summary;

function weighted(rows: ReadonlyArray<{ queries: number; value: Summary }>): Summary {
  const total = rows.reduce((n, r) => n + r.queries, 0);
  const keys = Object.keys(rows[0]!.value) as Array<keyof Summary>;
  return Object.fromEntries(
    keys.map((k) => [k, rows.reduce((s, r) => s + r.value[k] * r.queries, 0) / total]),
  ) as Summary;
}

/**
 * A 95 % percentile interval of the per-query mean of (with - without), queries resampled with replacement
 * within each set; `objective` per query is the mean of its three figures.
 */
function bootstrap(
  folds: ReadonlyArray<{ with: Scores; without: Scores }>,
  rounds = 1000,
  seed = 32,
): Record<keyof Summary, [number, number]> {
  const random = mulberry32(seed);
  const diffs = folds.map((f) => {
    const d = (k: (typeof METRICS)[number]) => f.with[k].map((x, i) => x - f.without[k][i]!);
    const hit5 = d('hit5');
    const recall10 = d('recall10');
    const split5 = d('split5');
    return { hit5, recall10, split5, objective: hit5.map((x, i) => (x + recall10[i]! + split5[i]!) / 3) };
  });
  const total = diffs.reduce((n, d) => n + d.hit5.length, 0);
  const keys = ['hit5', 'recall10', 'split5', 'objective'] as const;
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<
    (typeof keys)[number],
    number[]
  >;
  for (let r = 0; r < rounds; r++) {
    const sums = { hit5: 0, recall10: 0, split5: 0, objective: 0 };
    for (const d of diffs) {
      const n = d.hit5.length;
      for (let i = 0; i < n; i++) {
        const j = Math.floor(random() * n);
        for (const k of keys) sums[k] += d[k][j]!;
      }
    }
    for (const k of keys) samples[k].push(sums[k] / total);
  }
  const interval = (values: number[]): [number, number] => {
    const sorted = values.sort((a, b) => a - b);
    return [
      round(sorted[Math.floor(0.025 * (rounds - 1))]!, 4),
      round(sorted[Math.ceil(0.975 * (rounds - 1))]!, 4),
    ];
  };
  return Object.fromEntries(keys.map((k) => [k, interval(samples[k])])) as Record<
    keyof Summary,
    [number, number]
  >;
}

export interface BridgeFold {
  queries: number;
  trainedOn: string[];
  tableTerms: number;
  with: Summary;
  without: Summary;
}

/**
 * Each set left out in turn: the ranking given (with its bridge weight set to `weight` and to 0) scored on it,
 * with a table trained on the other trainable sets. `ranking` may be one per set (each fold's tuned ranking).
 */
export function bridgeLeaveOneOut(
  sets: readonly EvalSet[],
  ranking: RankingOptions | ((held: string) => RankingOptions),
  weight = BRIDGE_WEIGHT,
  training: BridgeTrainOptions = {},
  trainable: ReadonlySet<string> = TRAINABLE,
) {
  const folds: Record<string, BridgeFold> = {};
  const raw: Array<{ name: string; with: Scores; without: Scores }> = [];
  for (const held of sets) {
    const train = sets.filter((s) => s !== held && trainable.has(s.name));
    const bridge: VocabularyBridge = trainBridge(train, training);
    const base = typeof ranking === 'function' ? ranking(held.name) : ranking;
    const build = (w: number) =>
      ToolSearchIndex.build(held.tools, {
        servers: held.servers,
        ranking: mergeRanking(base, { bridge: { weight: w } }),
        bridge,
      });
    const on = perQuery(build(weight), held.queries, held.tools);
    const off = perQuery(build(0), held.queries, held.tools);
    raw.push({ name: held.name, with: on, without: off });
    folds[held.name] = {
      queries: held.queries.length,
      trainedOn: train.map((s) => s.name),
      tableTerms: Object.keys(bridge.terms).length,
      with: rounded(summary(on)),
      without: rounded(summary(off)),
    };
  }
  const means = (names: readonly string[]) => {
    const chosen = raw.filter((r) => names.includes(r.name));
    if (chosen.length === 0) return undefined;
    const w = weighted(chosen.map((r) => ({ queries: r.with.hit5.length, value: summary(r.with) })));
    const wo = weighted(chosen.map((r) => ({ queries: r.without.hit5.length, value: summary(r.without) })));
    const gain = Object.fromEntries(
      (Object.keys(w) as Array<keyof Summary>).map((k) => [k, w[k] - wo[k]]),
    ) as Summary;
    return {
      sets: names,
      queries: chosen.reduce((n, r) => n + r.with.hit5.length, 0),
      with: rounded(w),
      without: rounded(wo),
      gain: rounded(gain),
      gain95: bootstrap(chosen),
    };
  };
  const all = raw.map((r) => r.name);
  return {
    weight,
    folds,
    meanPerQuery: means(all),
    meanPerQueryWithoutMetaTool: means(all.filter((n) => n !== 'metatool')),
  };
}
