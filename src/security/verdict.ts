/**
 * The poisoning verdict: the evidence of one definition (evidence.ts features, the cue scanner's findings, the
 * catalog checks) weighed by a logistic model shipped as data (scan-model.ts). A definition's score is the bias
 * plus the weight of every feature it shows (each counted once, however often it occurs); past `warn` it is
 * flagged (medium), past `block` it is held (high). Every weight is zero or positive, so adding text to a
 * definition can never lower its score: an attacker cannot pad a payload with innocent-looking features to
 * buy it through.
 *
 * A few findings decide alone, whatever the score (`DECISIVE`): text the scanner could not read, and invisible
 * carriers that spell text (Unicode tags, variation-selector runs). No honest description needs them, and
 * what was not read cannot be vouched for.
 *
 * The weights are fitted by bench/scan-corpus/fit.ts on a labelled corpus kept outside the repository; how, and how well
 * they hold on sources they were not fitted on, is in docs/security.md.
 */

import { compareText } from '../util/text-order.js';
import type { Finding, FindingSeverity } from './scan.js';
import { SCAN_MODEL } from './scan-model.js';

export interface ScanModel {
  version: 1;
  /** What the weights were fitted on, in words (shown by `tack scan --json`). */
  fittedOn: string;
  bias: number;
  /** Feature key (an evidence feature, `cue.<code>` / `cue.<code>.high`, or a catalog check) to its weight. */
  weights: Readonly<Record<string, number>>;
  /**
   * On the score (log-odds): `warn` flags (medium), `block` holds (high); `grey` starts the band below `block`
   * that an LLM judge may look at (`scan.judge`), when one is configured.
   */
  thresholds: Readonly<{ grey: number; warn: number; block: number }>;
  /**
   * Features that flag a definition (warn) on their own, whatever the score: evidence that is an attack in itself
   * (a request for secrecy, an override, a name that claims to be the best), which the benign side of the data
   * the model was fitted on (almost) never shows. A logistic weight says what a feature adds next to the others it
   * usually comes with, so one such feature alone would otherwise stay under `warn`.
   */
  standalone: readonly string[];
}

/** Cue findings that decide alone (see the module comment): code and severity. */
const DECISIVE: ReadonlyArray<readonly [string, FindingSeverity]> = [
  ['unicode-tags', 'high'],
  ['variation-selectors', 'high'],
  ['oversized', 'high'],
];

export function isDecisive(finding: Pick<Finding, 'code' | 'severity'>): boolean {
  return DECISIVE.some(([code, severity]) => finding.code === code && finding.severity === severity);
}

/**
 * The model feature a finding counts as: its evidence feature, or `cue.<code>` (`.high` for a high one) for the
 * cue scanner's findings; low findings count as nothing (they are informational by definition).
 */
export function featureKey(
  finding: Pick<Finding, 'code' | 'severity'> & { cue?: boolean },
): string | undefined {
  if (!finding.cue) return finding.code;
  if (finding.severity === 'low') return undefined;
  return `cue.${finding.code}${finding.severity === 'high' ? '.high' : ''}`;
}

export interface Contribution {
  feature: string;
  weight: number;
}

export interface Judgement {
  verdict: 'clean' | 'warn' | 'block';
  /** The bias plus every contribution (log-odds). */
  score: number;
  /** The features that added to the score, the heaviest first. */
  contributions: Contribution[];
  /** Whether a decisive finding held it, whatever the score. */
  decisive: boolean;
  /** In the band an LLM judge may look at: flagged or not by the score, but not held. */
  grey: boolean;
  /** The feature that flagged the definition on its own (ScanModel.standalone), when the score alone did not. */
  alone?: string;
}

/** Weighs a set of feature keys. */
export function weigh(
  features: Iterable<string>,
  decisive: boolean,
  model: ScanModel = SCAN_MODEL,
): Judgement {
  const contributions: Contribution[] = [];
  let score = model.bias;
  for (const feature of new Set(features)) {
    const weight = model.weights[feature] ?? 0;
    if (weight <= 0) continue;
    score += weight;
    contributions.push({ feature, weight });
  }
  contributions.sort((a, b) => b.weight - a.weight || compareText(a.feature, b.feature));
  const { grey, warn, block } = model.thresholds;
  const alone = contributions.find((c) => model.standalone.includes(c.feature))?.feature;
  const verdict = decisive || score >= block ? 'block' : score >= warn || alone ? 'warn' : 'clean';
  return {
    verdict,
    score,
    contributions,
    decisive,
    grey: !decisive && score >= grey && score < block,
    ...(alone && score < warn ? { alone } : {}),
  };
}

/**
 * The severity a finding that weighs `weight` gets under a judgement, so that `verdictOf(findings)` is the
 * judgement's verdict: in a held definition the findings that weigh most are high and the rest that weigh are
 * medium; in a flagged one the findings that weigh are medium; everything that does not weigh, and everything in a
 * clean definition, is low. (Decisive findings stay high: the caller keeps them.)
 */
export function severityFor(judgement: Judgement, weight: number): FindingSeverity {
  if (weight <= 0 || judgement.verdict === 'clean') return 'low';
  if (judgement.verdict === 'warn') return 'medium';
  const heaviest = judgement.contributions[0]?.weight ?? 0;
  return weight >= Math.min(heaviest, HIGH_WEIGHT) ? 'high' : 'medium';
}

/** In a held definition, a finding weighing this much (or the heaviest one) is high. */
const HIGH_WEIGHT = 1.5;
