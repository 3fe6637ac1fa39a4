import type { ScanModel } from '../../src/security/verdict.js';
import { FIXED, PRIOR_BIAS, PRIORS, STANDALONE_CANDIDATES } from './priors.js';

/**
 * Fits the poisoning model (src/security/verdict.ts): logistic regression on the features each definition shows,
 * each weight held at zero or above (adding text never lowers a score) and pulled towards its prior (priors.ts) by
 * an L2 penalty, so a feature the training data barely shows keeps about its prior. Items are weighted so that
 * each class weighs the same in all, and within a class a source group of n items weighs sqrt(n) (89 MPMA
 * variants of one paper must not outweigh every other source). Thresholds are chosen on the same training data:
 * `warn` keeps the training false positives (flagged benign) under `knobs.warnFp` of all benign and 2.5 times that
 * of benign descriptions of 200+ characters, `block` under BLOCK_FP; `grey` (what a judge may see) at GREY_FP.
 * A standalone candidate (priors.ts) is kept when at most `knobs.standaloneFp` of the training benign show it.
 *
 * The two knobs are not set by hand: chooseKnobs picks them by an inner cross-validation over the training
 * groups (five folds of whole groups), maximizing recall while the inner false positives stay within the targets of
 * issue 15 (TARGET_FP overall, TARGET_LONG_FP on long descriptions). Nested inside leave-one-group-out, nothing
 * about the held-out group, not even these, is chosen with it.
 */
export interface TrainingItem {
  features: readonly string[];
  decisive: boolean;
  poisoned: boolean;
  group: string;
  long: boolean;
}

export interface Knobs {
  /** The share of training benign definitions `warn` may flag (the standalone features' share included). */
  warnFp: number;
  /** A standalone candidate is kept when at most this share of the training benign definitions show it. */
  standaloneFp: number;
}

export const KNOB_GRID: readonly Knobs[] = [0.005, 0.01, 0.015].flatMap((warnFp) =>
  [0.002, 0.004, 0.008, 0.012].map((standaloneFp) => ({ warnFp, standaloneFp })),
);
/** Issue 15's targets, which the inner cross-validation must meet. */
export const TARGET_FP = 0.02;
export const TARGET_LONG_FP = 0.05;
const INNER_FOLDS = 5;
export const BLOCK_FP = 0.004;
export const GREY_FP = 0.05;
/** The strength of the pull towards the priors (per unit of item weight; the item weights sum to the item count). */
export const LAMBDA = 2;
const SWEEPS = 300;

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

export function fitModel(items: readonly TrainingItem[], fittedOn: string, knobs: Knobs): ScanModel {
  const fitted = Object.keys(PRIORS);
  const column = new Map(fitted.map((f, k) => [f, k]));
  // Per item, the fitted columns it shows; catalog checks and unknown keys go into a fixed offset.
  const rows = items.map((item) => {
    const cols: number[] = [];
    let offset = 0;
    for (const f of new Set(item.features)) {
      const k = column.get(f);
      if (k !== undefined) cols.push(k);
      else offset += FIXED[f] ?? 0;
    }
    return { cols, offset, y: item.poisoned ? 1 : 0 };
  });
  const weights = sampleWeights(items);
  const holders: number[][] = fitted.map(() => []);
  rows.forEach((r, i) => {
    for (const k of r.cols) holders[k]!.push(i);
  });
  const w = fitted.map((f) => PRIORS[f]!);
  let bias = PRIOR_BIAS;
  const z = rows.map((r) => r.offset + bias + r.cols.reduce((sum, k) => sum + w[k]!, 0));
  // Coordinate descent: one Newton step per weight (clamped at zero), then the bias, SWEEPS times.
  for (let sweep = 0, moved = 1; sweep < SWEEPS && moved > 1e-5; sweep++) {
    moved = 0;
    for (let k = 0; k < w.length; k++) {
      let g = LAMBDA * (w[k]! - PRIORS[fitted[k]!]!);
      let h = LAMBDA;
      for (const i of holders[k]!) {
        const p = sigmoid(z[i]!);
        g += weights[i]! * (p - rows[i]!.y);
        h += weights[i]! * p * (1 - p);
      }
      const next = Math.max(0, w[k]! - g / h);
      const delta = next - w[k]!;
      moved = Math.max(moved, Math.abs(delta));
      if (delta === 0) continue;
      w[k] = next;
      for (const i of holders[k]!) z[i]! += delta;
    }
    let g = 0.05 * (bias - PRIOR_BIAS);
    let h = 0.05;
    rows.forEach((r, i) => {
      const p = sigmoid(z[i]!);
      g += weights[i]! * (p - r.y);
      h += weights[i]! * p * (1 - p);
    });
    const delta = -g / h;
    moved = Math.max(moved, Math.abs(delta));
    bias += delta;
    for (let i = 0; i < z.length; i++) z[i]! += delta;
  }
  const model: ScanModel = {
    version: 1,
    fittedOn,
    bias: round(bias),
    weights: Object.fromEntries([
      ...fitted.map((f, k) => [f, round(w[k]!)] as const).filter(([, v]) => v > 0),
      ...Object.entries(FIXED),
    ]),
    thresholds: { grey: 0, warn: 0, block: 0 },
    standalone: standaloneFor(items, knobs.standaloneFp),
  };
  return { ...model, thresholds: thresholdsFor(items, model, knobs.warnFp) };
}

/** Each class weighs the same; within it a group of n items weighs sqrt(n); the weights sum to the item count. */
function sampleWeights(items: readonly TrainingItem[]): number[] {
  const size = new Map<string, number>();
  for (const item of items)
    size.set(`${item.poisoned}\0${item.group}`, (size.get(`${item.poisoned}\0${item.group}`) ?? 0) + 1);
  const raw = items.map((item) => 1 / Math.sqrt(size.get(`${item.poisoned}\0${item.group}`)!));
  const total = (poisoned: boolean) =>
    raw.reduce((sum, r, i) => sum + (items[i]!.poisoned === poisoned ? r : 0), 0);
  const perClass = items.length / 2;
  const scale = { true: perClass / total(true), false: perClass / total(false) };
  return raw.map((r, i) => r * scale[String(items[i]!.poisoned) as 'true' | 'false']);
}

export function scoreOf(features: readonly string[], model: ScanModel): number {
  let score = model.bias;
  for (const f of new Set(features)) score += Math.max(0, model.weights[f] ?? 0);
  return score;
}

/** The lowest threshold (just above a benign score) that keeps the share of benign at or above it within `share`. */
function thresholdAt(benignScores: number[], share: number): number {
  const sorted = [...benignScores].sort((a, b) => b - a);
  const allowed = Math.floor(share * sorted.length);
  // Scores are sums of a few weights: ties are common, and a threshold may not split them.
  let k = allowed;
  while (k > 0 && sorted[k] === sorted[k - 1]) k--;
  const above = sorted[k] ?? Number.NEGATIVE_INFINITY;
  return round(above + 0.01, 2);
}

/** The candidates the training benign definitions show at most `share` of the time. */
function standaloneFor(items: readonly TrainingItem[], share: number): string[] {
  const benign = items.filter((i) => !i.poisoned);
  return STANDALONE_CANDIDATES.filter(
    (f) => benign.filter((i) => i.features.includes(f)).length <= share * benign.length,
  );
}

/**
 * `warn` counts what the standalone features already flag: the benign definitions they flag use up part of the
 * false-positive budget, and the threshold is chosen on the rest.
 */
function thresholdsFor(
  items: readonly TrainingItem[],
  model: ScanModel,
  warnFp: number,
): ScanModel['thresholds'] {
  const benign = items.filter((i) => !i.poisoned && !i.decisive);
  const alone = (i: TrainingItem) => i.features.some((f) => model.standalone.includes(f));
  const budget = (share: number, list: TrainingItem[]) =>
    Math.max(0, share - list.filter(alone).length / Math.max(1, list.length)) *
    (list.length / Math.max(1, list.filter((i) => !alone(i)).length));
  const rest = benign.filter((i) => !alone(i));
  const longAll = benign.filter((i) => i.long);
  const all = rest.map((i) => scoreOf(i.features, model));
  const long = rest.filter((i) => i.long).map((i) => scoreOf(i.features, model));
  const warn = Math.max(
    thresholdAt(all, budget(warnFp, benign)),
    thresholdAt(long, budget(2.5 * warnFp, longAll)),
  );
  const block = Math.max(warn, thresholdAt(all, BLOCK_FP));
  const grey = Math.min(warn, thresholdAt(all, GREY_FP));
  return { grey, warn, block };
}

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

/** The model as the TypeScript module src/security/scan-model.ts ships. */
export function modelSource(model: ScanModel): string {
  return `/**
 * Generated by bench/scan-corpus/fit.ts: the poisoning model's weights (verdict.ts). Data, not code: refit with
 * \`npm run build && node dist/bench/scan-corpus/write-model.js --write\` (it reads the labelled corpus from outside the
 * repository) rather than editing by hand.
 */
import type { ScanModel } from './verdict.js';

export const SCAN_MODEL: ScanModel = ${JSON.stringify(model, null, 2)};
`;
}

/** Whether `model` flags an item (warn or block), as verdict.ts decides. */
export function flags(item: TrainingItem, model: ScanModel): boolean {
  return (
    item.decisive ||
    scoreOf(item.features, model) >= model.thresholds.warn ||
    item.features.some((f) => model.standalone.includes(f))
  );
}

/**
 * The knobs for `items`: each of KNOB_GRID scored by an inner cross-validation (INNER_FOLDS folds of whole
 * groups, assigned in turn by name), and the one with the best recall among those within the targets (the lowest
 * false positives on a tie; the most conservative, the lowest knobs, when none is within them).
 */
export function chooseKnobs(items: readonly TrainingItem[]): {
  knobs: Knobs;
  recall: number;
  fp: number;
  longFp: number;
} {
  const groups = [...new Set(items.map((i) => i.group))].sort();
  const foldOf = new Map(groups.map((g, k) => [g, k % INNER_FOLDS]));
  let best: { knobs: Knobs; recall: number; fp: number; longFp: number } | undefined;
  for (const knobs of KNOB_GRID) {
    let tp = 0;
    let pos = 0;
    let fp = 0;
    let neg = 0;
    let longFp = 0;
    let longNeg = 0;
    for (let fold = 0; fold < INNER_FOLDS; fold++) {
      const test = items.filter((i) => foldOf.get(i.group) === fold);
      if (test.length === 0) continue;
      const model = fitModel(
        items.filter((i) => foldOf.get(i.group) !== fold),
        'inner fold',
        knobs,
      );
      for (const item of test) {
        const flagged = flags(item, model);
        if (item.poisoned) {
          pos++;
          if (flagged) tp++;
        } else {
          neg++;
          if (flagged) fp++;
          if (item.long) {
            longNeg++;
            if (flagged) longFp++;
          }
        }
      }
    }
    const score = {
      knobs,
      recall: pos ? tp / pos : 0,
      fp: neg ? fp / neg : 0,
      longFp: longNeg ? longFp / longNeg : 0,
    };
    const within = (s: typeof score) => s.fp <= TARGET_FP && s.longFp <= TARGET_LONG_FP;
    if (
      !best ||
      (within(score) && !within(best)) ||
      (within(score) === within(best) &&
        (within(score)
          ? score.recall > best.recall || (score.recall === best.recall && score.fp < best.fp)
          : score.fp < best.fp))
    )
      best = score;
  }
  return best!;
}
