import { table } from '../../src/cli/output.js';
import type { RetrievalMetrics } from './metrics.js';

/**
 * The feature table (issue 32: every feature earns its place on unseen data): for each part of the ranking, the
 * sets left out scored with it and without it, each by the ranking tuned on the other sets, and the means over
 * all sets weighted per query. A feature earns its place when the per-query mean of the tuning's objective is
 * higher with it than without it.
 */

interface Scored {
  task: RetrievalMetrics;
  split: RetrievalMetrics;
}

/** The three figures a feature is judged on, and their mean (what tuning maximises). */
export interface Judged {
  hit5: number;
  recall10: number;
  splitRecall5: number;
  objective: number;
}

export interface FoldFeature {
  /** Whether the fold's tuned ranking has it (then `with` is the fold's own score). */
  has: boolean;
  with: Scored;
  without: Scored;
}

export interface FeatureFold {
  queries: number;
  tack: Scored;
  baseline: Scored;
  /** By feature name; `every feature off` among them when measured. */
  features: Record<string, FoldFeature>;
}

export function judged(s: Scored): Judged {
  const hit5 = s.task.hitAt[5]!;
  const recall10 = s.task.recallAt[10]!;
  const splitRecall5 = s.split.recallAt[5]!;
  return { hit5, recall10, splitRecall5, objective: (hit5 + recall10 + splitRecall5) / 3 };
}

const KEYS = ['hit5', 'recall10', 'splitRecall5', 'objective'] as const;

const combine = (a: Judged, b: Judged, f: (x: number, y: number) => number): Judged =>
  Object.fromEntries(KEYS.map((k) => [k, f(a[k], b[k])])) as unknown as Judged;

const rounded = (j: Judged, digits = 4): Judged => combine(j, j, (x) => Number(x.toFixed(digits)));

/** Weighted by each set's queries: every query counts once, whatever set it is in. */
function perQuery(parts: ReadonlyArray<{ queries: number; value: Judged }>): Judged {
  const total = parts.reduce((n, p) => n + p.queries, 0);
  return Object.fromEntries(
    KEYS.map((k) => [k, parts.reduce((sum, p) => sum + p.value[k] * p.queries, 0) / Math.max(1, total)]),
  ) as unknown as Judged;
}

export interface FeatureRow {
  feature: string;
  /** The sets whose fold ranking had it: the others had tuned it out, and `with` puts it back at its prior value. */
  keptByFolds: string[];
  meanPerQuery: {
    with: Judged;
    without: Judged;
    /** with - without: what the feature gains on unseen data. */
    gain: Judged;
    /** without - the folds' own rankings. */
    withoutVsTack: Judged;
    /** without - the BM25 baseline. */
    withoutVsBaseline: Judged;
  };
  sets: Record<string, { queries: number; with: Judged; without: Judged; gain: Judged }>;
  earnsItsPlace: boolean;
}

export function featureTable(folds: Readonly<Record<string, FeatureFold>>) {
  const entries = Object.entries(folds);
  const mean = (pick: (fold: FeatureFold) => Scored) =>
    perQuery(entries.map(([, fold]) => ({ queries: fold.queries, value: judged(pick(fold)) })));
  const tack = mean((f) => f.tack);
  const baseline = mean((f) => f.baseline);
  const names = [...new Set(entries.flatMap(([, fold]) => Object.keys(fold.features)))];
  const rows: FeatureRow[] = names.map((feature) => {
    const present = entries.filter(([, fold]) => fold.features[feature]);
    const side = (which: 'with' | 'without') =>
      perQuery(
        present.map(([, fold]) => ({ queries: fold.queries, value: judged(fold.features[feature]![which]) })),
      );
    const on = side('with');
    const off = side('without');
    const gain = combine(on, off, (a, b) => a - b);
    return {
      feature,
      keptByFolds: present.filter(([, fold]) => fold.features[feature]!.has).map(([name]) => name),
      meanPerQuery: {
        with: rounded(on),
        without: rounded(off),
        gain: rounded(gain),
        withoutVsTack: rounded(combine(off, tack, (a, b) => a - b)),
        withoutVsBaseline: rounded(combine(off, baseline, (a, b) => a - b)),
      },
      sets: Object.fromEntries(
        present.map(([name, fold]) => {
          const w = judged(fold.features[feature]!.with);
          const wo = judged(fold.features[feature]!.without);
          return [
            name,
            {
              queries: fold.queries,
              with: rounded(w),
              without: rounded(wo),
              gain: rounded(combine(w, wo, (a, b) => a - b)),
            },
          ];
        }),
      ),
      earnsItsPlace: gain.objective > 0,
    };
  });
  return {
    rule: 'A feature earns its place when the per-query mean over the sets left out of (task Hit@5 + task Recall@10 + split Recall@5) / 3 is higher with it than without it, each set scored by the ranking tuned on the others with only that feature changed.',
    tack: {
      meanPerQuery: rounded(tack),
      sets: Object.fromEntries(entries.map(([name, f]) => [name, rounded(judged(f.tack))])),
    },
    baseline: {
      meanPerQuery: rounded(baseline),
      sets: Object.fromEntries(entries.map(([name, f]) => [name, rounded(judged(f.baseline))])),
    },
    features: rows,
  };
}

export type FeatureTable = ReturnType<typeof featureTable>;

/** A feature no fold's ranking has is judged on whether it would gain if put back. */
const verdict = (row: FeatureRow) =>
  row.keptByFolds.length > 0
    ? row.earnsItsPlace
      ? 'keeps its place'
      : 'goes'
    : row.earnsItsPlace
      ? 'gains put back'
      : 'stays out';

const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(4)}`;
const three = (j: Judged) => `${j.hit5.toFixed(3)} ${j.recall10.toFixed(3)} ${j.splitRecall5.toFixed(3)}`;

/** The table as text: per-query means (Hit@5, Recall@10, split Recall@5), each set's gain on the objective. */
export function formatFeatureTable(t: FeatureTable): string {
  const sets = Object.keys(t.tack.sets);
  return table(
    [
      'FEATURE OFF',
      'H@5 R@10 SR@5',
      'GAIN H@5',
      'GAIN R@10',
      'GAIN SR@5',
      'GAIN OBJ',
      ...sets.map((s) => s.toUpperCase()),
      'VERDICT',
    ],
    [
      ['tack (each fold as tuned)', three(t.tack.meanPerQuery), '', '', '', '', ...sets.map(() => ''), ''],
      ...t.features.map((row) => [
        row.feature,
        three(row.meanPerQuery.without),
        signed(row.meanPerQuery.gain.hit5),
        signed(row.meanPerQuery.gain.recall10),
        signed(row.meanPerQuery.gain.splitRecall5),
        signed(row.meanPerQuery.gain.objective),
        ...sets.map((s) => (row.sets[s] ? signed(row.sets[s].gain.objective) : '')),
        verdict(row),
      ]),
      ['BM25 baseline', three(t.baseline.meanPerQuery), '', '', '', '', ...sets.map(() => ''), ''],
    ],
  );
}
