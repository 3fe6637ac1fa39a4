import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DefinitionReport, type ScannableDefinition, scanCatalog } from '../../src/security/catalog.js';
import type { ScannableTool, ScanVerdict } from '../../src/security/scan.js';
import { scanTool } from '../../src/security/scan.js';
import { SCAN_MODEL } from '../../src/security/scan-model.js';
import { type ScanModel, weigh } from '../../src/security/verdict.js';
import { isMain, log, repoRoot, round } from '../util.js';
import { type CorpusItem, corpusPath, loadCorpus } from './corpus.js';
import { chooseKnobs, fitModel, type Knobs, type TrainingItem } from './fit.js';

/**
 * The poisoning scanner on a labelled corpus of published tool definitions it was not written against (issue 15),
 * measured like a held-out test: leave one source group out. For each group, the model is fitted (weights and
 * thresholds, fit.ts) on every other group and scored on the group left out, whose definitions are scanned as one
 * catalog, as `tack scan --tools FILE` scans a file (scanCatalog, the function the command calls). Those are the
 * generalization figures. Apart from them: the model fitted on all groups scored on all of them (the shipped model;
 * tuned, so an upper bound), and the developer-written fixtures of test/fixtures/security (never fitted on).
 *
 * Flagged = verdict `warn` or `block` (a medium or high finding), for recall and for false positives alike.
 */
/**
 * Source groups whose texts were never read while the feature vocabulary (evidence.ts) was revised after the first
 * look: fixed before that revision began, they are held out from the developer as well as from the fit. Their
 * figures are reported apart (`blindGroups`): the only ones here that also test the vocabulary on unseen text.
 */
export const BLIND_GROUPS: readonly string[] = [
  'cisco_mcp_scanner',
  'gensec_poc',
  'hacktricks',
  'hijack_agentic_ai',
  'npm_notionhq_notion-mcp-server',
  'npm_sentry_mcp-server',
  'npm_mongodb-mcp-server',
  'npm_hubspot_mcp-server',
];

const CORE = [
  'hidden_text',
  'exfiltration',
  'cross_tool_shadowing',
  'tool_redirection',
  'instruction_override',
];
const LONG = 200;

export interface Scored {
  item: CorpusItem;
  features: string[];
  decisive: boolean;
}

interface Outcome {
  item: CorpusItem;
  verdict: ScanVerdict;
  score: number;
}

/** Features of every item, its source group scanned as one catalog. */
export function scoreGroups(
  items: readonly CorpusItem[],
  catalogOf: (item: CorpusItem) => string,
  server?: (item: CorpusItem) => string,
): Scored[] {
  const catalogs = new Map<string, CorpusItem[]>();
  for (const item of items) {
    const key = catalogOf(item);
    catalogs.set(key, [...(catalogs.get(key) ?? []), item]);
  }
  const out = new Map<CorpusItem, Scored>();
  for (const members of catalogs.values()) {
    const definitions = members.map((m) => (server ? { ...m.definition, server: server(m) } : m.definition));
    const reports = scanCatalog(definitions);
    members.forEach((m, i) => {
      out.set(m, { item: m, features: reports[i]!.features, decisive: reports[i]!.decisive });
    });
  }
  return items.map((item) => out.get(item)!);
}

function training(scored: readonly Scored[]): TrainingItem[] {
  return scored.map((s) => ({
    features: s.features,
    decisive: s.decisive,
    poisoned: s.item.label === 'poisoned',
    group: s.item.group,
    long: s.item.descriptionChars >= LONG,
  }));
}

function outcome(s: Scored, model: ScanModel): Outcome {
  const j = weigh(s.features, s.decisive, model);
  return { item: s.item, verdict: j.verdict, score: round(j.score, 2) };
}

export interface FoldModel {
  model: ScanModel;
  knobs: Knobs;
}

/**
 * Leave one group out: a model per group, its knobs chosen (fit.ts chooseKnobs) and its weights fitted on the other
 * groups only.
 */
export function leaveOneGroupOut(scored: readonly Scored[]): Map<string, FoldModel> {
  const models = new Map<string, FoldModel>();
  for (const group of new Set(scored.map((s) => s.item.group))) {
    const rest = training(scored.filter((s) => s.item.group !== group));
    const { knobs } = chooseKnobs(rest);
    models.set(group, { model: fitModel(rest, `all source groups but ${group}`, knobs), knobs });
  }
  return models;
}

/** Each item scored by the model of its group (fitted without it). */
export function heldOut(models: Map<string, FoldModel>, scored: readonly Scored[]): Outcome[] {
  return scored.map((s) => outcome(s, models.get(s.item.group)!.model));
}

/** The shipped model's recipe: knobs chosen by the inner cross-validation over all groups, fitted on all. */
export function fitAll(scored: readonly Scored[], fittedOn: string): FoldModel {
  const items = training(scored);
  const { knobs } = chooseKnobs(items);
  return { model: fitModel(items, fittedOn, knobs), knobs };
}

/** `record[key]`, created by `init` the first time. */
function entry<T>(record: Record<string, T>, key: string, init: () => T): T {
  const value = record[key] ?? init();
  record[key] = value;
  return value;
}

const flagged = (o: Outcome) => o.verdict !== 'clean';
const rate = (n: number, d: number) => (d === 0 ? null : round(n / d, 3));

export function summarize(outcomes: readonly Outcome[]) {
  const poisoned = outcomes.filter((o) => o.item.label === 'poisoned');
  const benign = outcomes.filter((o) => o.item.label === 'benign');
  const long = benign.filter((o) => o.item.descriptionChars >= LONG);
  const core = poisoned.filter((o) => CORE.includes(o.item.class));
  const nonMpma = poisoned.filter((o) => o.item.group !== 'mpma_paper');
  // As issue 15 counts them: high (verdict block), medium (warn), missed (clean).
  const perClass: Record<
    string,
    {
      n: number;
      high: number;
      medium: number;
      missed: number;
      flagged: number;
      recall: number | null;
      /** Wilson 95 % interval of the recall: a class of 5 says little, and the interval shows how little. */
      interval: [number, number] | null;
      groups: Record<string, number>;
    }
  > = {};
  for (const o of poisoned) {
    const c = entry(perClass, o.item.class, () => ({
      n: 0,
      high: 0,
      medium: 0,
      missed: 0,
      flagged: 0,
      recall: null,
      interval: null,
      groups: {},
    }));
    c.n++;
    if (o.verdict === 'block') c.high++;
    else if (o.verdict === 'warn') c.medium++;
    else c.missed++;
    if (flagged(o)) c.flagged++;
    c.groups[o.item.group] = (c.groups[o.item.group] ?? 0) + 1;
  }
  for (const c of Object.values(perClass)) {
    c.recall = rate(c.flagged, c.n);
    c.interval = wilson(c.flagged, c.n);
  }
  const perGroup: Record<
    string,
    { benign: number; falsePositives: number; poisoned: number; flagged: number }
  > = {};
  for (const o of outcomes) {
    const g = entry(perGroup, o.item.group, () => ({
      benign: 0,
      falsePositives: 0,
      poisoned: 0,
      flagged: 0,
    }));
    if (o.item.label === 'benign') {
      g.benign++;
      if (flagged(o)) g.falsePositives++;
    } else {
      g.poisoned++;
      if (flagged(o)) g.flagged++;
    }
  }
  const variants: Record<string, { n: number; flagged: number }> = {};
  for (const o of poisoned.filter((x) => x.item.group === 'mpma_paper')) {
    const key = `${o.item.source}: ${o.item.note.split(/[;:(]/)[0]!.trim().slice(0, 40)}`;
    const v = entry(variants, key, () => ({ n: 0, flagged: 0 }));
    v.n++;
    if (flagged(o)) v.flagged++;
  }
  return {
    poisoned: poisoned.length,
    flagged: poisoned.filter(flagged).length,
    blocked: poisoned.filter((o) => o.verdict === 'block').length,
    recall: rate(poisoned.filter(flagged).length, poisoned.length),
    recallInterval: wilson(poisoned.filter(flagged).length, poisoned.length),
    recallCore: rate(core.filter(flagged).length, core.length),
    recallWithoutMpma: rate(nonMpma.filter(flagged).length, nonMpma.length),
    benign: benign.length,
    falsePositives: benign.filter(flagged).length,
    falsePositiveRate: rate(benign.filter(flagged).length, benign.length),
    falsePositiveInterval: wilson(benign.filter(flagged).length, benign.length),
    falsePositivesBlocked: benign.filter((o) => o.verdict === 'block').length,
    long: {
      benign: long.length,
      falsePositives: long.filter(flagged).length,
      rate: rate(long.filter(flagged).length, long.length),
    },
    perClass,
    perGroup,
    mpmaVariants: variants,
    missed: poisoned.filter((o) => !flagged(o)).map((o) => o.item.id),
    falsePositiveIds: benign.filter(flagged).map((o) => `${o.item.id} (${o.verdict}, ${o.score})`),
  };
}

/** The developer-written fixtures, scanned as test/security/scan.test.ts scans them, with a given model. */
function fixtures(model: ScanModel) {
  interface Entry {
    id: string;
    label: 'poisoned' | 'benign';
    tool: ScannableTool;
  }
  const corpus = JSON.parse(readFileSync(join(repoRoot, 'test/fixtures/security/corpus.json'), 'utf8')) as {
    catalog: { tools: string[]; servers: string[] };
    entries: Entry[];
  };
  const options = {
    knownTools: [...corpus.entries.map((e) => `${e.tool.server}__${e.tool.name}`), ...corpus.catalog.tools],
    knownServers: [...new Set([...corpus.entries.map((e) => e.tool.server), ...corpus.catalog.servers])],
    model,
  };
  const results = corpus.entries.map((e) => ({ e, verdict: scanTool(e.tool, options).verdict }));
  const poisoned = results.filter((r) => r.e.label === 'poisoned');
  const benign = results.filter((r) => r.e.label === 'benign');
  return {
    poisoned: poisoned.length,
    recall: rate(poisoned.filter((r) => r.verdict !== 'clean').length, poisoned.length),
    blocked: poisoned.filter((r) => r.verdict === 'block').length,
    benign: benign.length,
    falsePositives: benign.filter((r) => r.verdict !== 'clean').length,
    falsePositivesBlocked: benign.filter((r) => r.verdict === 'block').length,
    missed: poisoned.filter((r) => r.verdict === 'clean').map((r) => r.e.id),
    flaggedBenign: benign.filter((r) => r.verdict !== 'clean').map((r) => `${r.e.id} (${r.verdict})`),
  };
}

/** The corpus's items with their features, for fitting the shipped model on all of them (fit.ts --write). */
export function trainingItems(): { scored: Scored[]; items: TrainingItem[]; description: string } {
  const path = corpusPath();
  if (!path) throw new Error('the labelled corpus is not there: set TACK_SCAN_CORPUS');
  const { items } = loadCorpus(path);
  const scored = scoreGroups(items, (i) => i.group);
  const groups = new Set(items.map((i) => i.group)).size;
  return {
    scored,
    items: training(scored),
    description: `all ${groups} source groups of the labelled corpus of published definitions (rebuilt 2026-12-07; ${items.length} definitions with text: ${items.filter((i) => i.label === 'poisoned').length} poisoned, ${items.filter((i) => i.label === 'benign').length} benign)`,
  };
}

/** The Wilson score interval (95 %) of k successes in n: sound for small n and for rates near 0 or 1. */
export function wilson(k: number, n: number): [number, number] | null {
  if (n === 0) return null;
  const z = 1.96;
  const p = k / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return [round(Math.max(0, centre - half)), round(Math.min(1, centre + half))];
}

const span = (i: [number, number] | null) => (i ? `${i[0]}-${i[1]}` : 'n/a');

function table(title: string, s: ReturnType<typeof summarize>): string[] {
  const lines = [
    `${title}: recall ${s.recall} [${span(s.recallInterval)}] (${s.flagged}/${s.poisoned}; core ${s.recallCore}; without MPMA ${s.recallWithoutMpma}), false positives ${s.falsePositiveRate} [${span(s.falsePositiveInterval)}] (${s.falsePositives}/${s.benign}; ${s.falsePositivesBlocked} blocked), on 200+ char descriptions ${s.long.rate} (${s.long.falsePositives}/${s.long.benign})`,
  ];
  for (const [c, v] of Object.entries(s.perClass).sort((a, b) => b[1].n - a[1].n))
    lines.push(
      `  ${c.padEnd(30)} ${String(v.flagged).padStart(3)}/${String(v.n).padEnd(3)} ${String(v.recall).padEnd(5)} [${span(v.interval)}] high ${v.high} medium ${v.medium} missed ${v.missed}  ${Object.entries(
        v.groups,
      )
        .map(([g, n]) => `${g}:${n}`)
        .join(' ')}`,
    );
  return lines;
}

export async function runScanCorpus(): Promise<Record<string, unknown>> {
  const path = corpusPath();
  if (!path) {
    log(
      'scan-corpus: the labelled corpus is not there (TACK_SCAN_CORPUS, ../corpus15/corpus.jsonl): skipped',
    );
    return { skipped: 'labelled corpus not found: set TACK_SCAN_CORPUS to its corpus.jsonl' };
  }
  const { items, withheld } = loadCorpus(path);
  log(`scan-corpus: ${items.length} definitions with text (${withheld} withheld) from ${path}`);
  const started = performance.now();
  const scored = scoreGroups(items, (i) => i.group);
  const scanMs = performance.now() - started;
  const loso = leaveOneGroupOut(scored);
  const heldOutcomes = heldOut(loso, scored);
  const held = summarize(heldOutcomes);
  // A rebuilt corpus may hold none of the blind groups: then there is no blind figure to report, not a zero one.
  const blindPresent = BLIND_GROUPS.filter((g) => items.some((i) => i.group === g));
  const blind =
    blindPresent.length > 0
      ? summarize(heldOutcomes.filter((o) => blindPresent.includes(o.item.group)))
      : undefined;
  const all = fitAll(scored, 'all source groups');
  const tuned = summarize(scored.map((s) => outcome(s, all.model)));
  const shipped = summarize(scored.map((s) => outcome(s, SCAN_MODEL)));
  // The same held-out models on other catalogs: every tool on its own server (issue 15's setting), and the whole
  // corpus as one catalog (catalog checks across 46 sources).
  const ownServer = heldOut(
    loso,
    scoreGroups(
      items,
      (i) => i.group,
      (i) => i.id,
    ),
  );
  const oneCatalog = heldOut(
    loso,
    scoreGroups(items, () => 'all'),
  );
  for (const line of table('leave one source group out', held)) log(line);
  if (blind)
    for (const line of table('blind groups (never read while the vocabulary was revised)', blind)) log(line);
  else log('blind groups: none of them is in this corpus, so no blind figure');
  for (const line of table('leave one source group out, each tool on its own server', summarize(ownServer)))
    log(line);
  for (const line of table('tuned (fitted on all, scored on all)', tuned)) log(line);
  const fx = fixtures(SCAN_MODEL);
  log(
    `fixtures (shipped model): recall ${fx.recall} (${fx.poisoned}), false positives ${fx.falsePositives}/${fx.benign}`,
  );
  return {
    corpus: path,
    definitions: items.length,
    withheld,
    scanMs: round(scanMs),
    leaveOneGroupOut: held,
    blindGroups: blind ? { groups: blindPresent, ...blind } : { groups: [], absent: BLIND_GROUPS },
    leaveOneGroupOutEachToolOwnServer: summarize(ownServer),
    leaveOneGroupOutWholeCorpusOneCatalog: summarize(oneCatalog),
    tuned,
    shipped: { fittedOn: SCAN_MODEL.fittedOn, ...shipped },
    fixtures: fx,
    shippedRecipe: { knobs: all.knobs },
    folds: Object.fromEntries(
      [...loso].map(([g, f]) => [
        g,
        {
          knobs: f.knobs,
          bias: f.model.bias,
          thresholds: f.model.thresholds,
          standalone: f.model.standalone,
        },
      ]),
    ),
  };
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runScanCorpus(), null, 2)}\n`);
}

export type { DefinitionReport, ScannableDefinition };
