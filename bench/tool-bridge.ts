import { DEFAULT_RANKING, mergeRanking } from '../src/search/ranking.js';
import { BRIDGE_WEIGHT, bridgeLeaveOneOut, TRAINABLE } from './tool-retrieval/bridge-lodo.js';
import { BRIDGE_TRAINING, bridgeJson, trainBridge } from './tool-retrieval/bridge-train.js';
import { type Dataset, loadDataset } from './tool-retrieval/lodo.js';
import { loadMetaTool, metatoolSet, SETS } from './tool-search.js';
import { log } from './util.js';

/**
 * The vocabulary bridge left out set by set (`node dist/bench/run.js tool-bridge`): each set scored by the shipped
 * ranking with and without a table trained on the other sets, on the four sets of tool-search and again with
 * APIBench (Gorilla's model hubs: another shape, and the one large set besides MetaTool) as a fifth. Minutes,
 * not the tool-search benchmark's hour: no tuning (the ranking is the shipped one, which saw every set but
 * APIBench; only the bridge is left out here, and its difference is what this measures).
 */
export async function runToolBridge(options: { metatool?: string } = {}) {
  const sets: Dataset[] = [metatoolSet(loadMetaTool(options.metatool))];
  for (const name of [...SETS, 'apibench']) {
    const set = loadDataset(name);
    if (set) sets.push(set);
    else log(`tool-bridge: ${name} is not in TACK_TOOL_RETRIEVAL_DIR, left out`);
  }
  const ranking = mergeRanking(DEFAULT_RANKING);
  log('tool-bridge: the four sets of tool-search');
  const four = bridgeLeaveOneOut(
    sets.filter((s) => s.name !== 'apibench'),
    ranking,
  );
  log('tool-bridge: with APIBench');
  const five = bridgeLeaveOneOut(sets, ranking);
  log('tool-bridge: with APIBench left out only, never learned from');
  const fiveHeldOnly = bridgeLeaveOneOut(
    sets,
    ranking,
    BRIDGE_WEIGHT,
    {},
    new Set([...TRAINABLE].filter((name) => name !== 'apibench')),
  );
  const all = trainBridge(sets.filter((s) => TRAINABLE.has(s.name)));
  return {
    description:
      'Vocabulary bridge, leave one data set out: for each set, a query-word -> tool-word table trained (bench/tool-retrieval/bridge-train.ts) on the other sets whose licence lets a table learned from them ship (MetaTool, RestBench, tau-bench: MIT; APIBench: Apache-2.0; not ToolLens, which states none), then the set scored by the shipped ranking with the bridge at weight 0.25 and without it. Per-query figures: task Hit@5, task Recall@10, split (capability queries) Recall@5 and their mean (objective); means weighted per query; gain95 = 95 % bootstrap interval of the per-query mean gain (1,000 resamples of the queries within each set).',
    training: BRIDGE_TRAINING,
    weight: BRIDGE_WEIGHT,
    trainable: [...TRAINABLE].filter((name) => sets.some((s) => s.name === name)),
    fourSets: four,
    withApibench: five,
    withApibenchNeverLearnedFrom: fiveHeldOnly,
    tableOnAllTrainable: {
      queryTerms: Object.keys(all.terms).length,
      pairs: Object.values(all.terms).reduce((n, t) => n + t.length, 0),
      bytes: Buffer.byteLength(bridgeJson(all)),
    },
  };
}
