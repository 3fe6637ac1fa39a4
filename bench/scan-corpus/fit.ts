import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScanModel } from '../../src/security/verdict.js';
import { isMain, log, repoRoot } from '../util.js';
import { FIXED, PRIOR_BIAS, PRIORS } from './priors.js';

/**
 * Fits the poisoning model (src/security/verdict.ts): logistic regression on the features each definition shows,
 * each weight held at zero or above (adding text never lowers a score) and pulled towards its prior (priors.ts) by
 * an L2 penalty, so a feature the training data barely shows keeps about its prior. Items are weighted so that
 * each class weighs the same in all, and within a class a source group of n items weighs sqrt(n) (89 MPMA
 * variants of one paper must not outweigh every other source). Thresholds are chosen on the same training data:
 * `warn` keeps the training false positives (flagged benign) under WARN_FP of all benign and LONG_FP of benign
 * descriptions of 200+ characters, `block` under BLOCK_FP; `grey` (what a judge may see) at GREY_FP.
 */
export interface TrainingItem {
  features: readonly string[];
  decisive: boolean;
  poisoned: boolean;
  group: string;
  long: boolean;
}

export const WARN_FP = 0.01;
export const LONG_FP = 0.025;
export const BLOCK_FP = 0.004;
export const GREY_FP = 0.05;
/** The strength of the pull towards the priors (per unit of item weight; the item weights sum to the item count). */
export const LAMBDA = 2;
const SWEEPS = 300;

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

export function fitModel(items: readonly TrainingItem[], fittedOn: string): ScanModel {
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
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
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
  };
  return { ...model, thresholds: thresholdsFor(items, model) };
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

function thresholdsFor(items: readonly TrainingItem[], model: ScanModel): ScanModel['thresholds'] {
  const benign = items.filter((i) => !i.poisoned && !i.decisive);
  const all = benign.map((i) => scoreOf(i.features, model));
  const long = benign.filter((i) => i.long).map((i) => scoreOf(i.features, model));
  const warn = Math.max(thresholdAt(all, WARN_FP), thresholdAt(long, LONG_FP));
  const block = Math.max(warn, thresholdAt(all, BLOCK_FP));
  const grey = Math.min(warn, thresholdAt(all, GREY_FP));
  return { grey, warn, block };
}

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

/** The model as the TypeScript module src/security/scan-model.ts ships. */
export function modelSource(model: ScanModel): string {
  return `/**
 * Generated by bench/scan-corpus/fit.ts: the poisoning model's weights (verdict.ts). Data, not code: refit with
 * \`npm run build && node dist/bench/scan-corpus/fit.js --write\` (it reads the labelled corpus from outside the
 * repository) rather than editing by hand.
 */
import type { ScanModel } from './verdict.js';

export const SCAN_MODEL: ScanModel = ${JSON.stringify(model, null, 2)};
`;
}

if (isMain(import.meta.url)) {
  const { trainingItems } = await import('./run.js');
  const { items, description } = trainingItems();
  const model = fitModel(items, description);
  log(
    `fitted on ${items.length} definitions: bias ${model.bias}, thresholds ${JSON.stringify(model.thresholds)}`,
  );
  if (process.argv.includes('--write')) {
    writeFileSync(join(repoRoot, 'src/security/scan-model.ts'), modelSource(model));
    log('wrote src/security/scan-model.ts (run `npx biome check --write` on it)');
  } else process.stdout.write(`${JSON.stringify(model, null, 2)}\n`);
}
