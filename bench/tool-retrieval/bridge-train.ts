import type { VocabularyBridge } from '../../src/search/bridge.js';
import { nameWords, tokenize } from '../../src/search/tokenize.js';
import type { SearchableTool } from '../../src/search/tool-index.js';
import { goldMatcher, type RetrievalQuery } from './metrics.js';

/**
 * Trains the vocabulary bridge (src/search/bridge.ts) from labelled tool-retrieval sets: which words a tool's
 * name, title and description hold when the requests it answered say a word it does not.
 *
 * The unit of evidence is a gold tool, not a query: MetaTool words one intent a hundred ways, and counting
 * queries would learn that one tool's vocabulary a hundred times over. For each tool, a query word counts by
 * the share of the tool's queries that hold it; a pair (query word q, tool word t) gathers that share over the
 * tools that hold t and lack q. Kept: pairs seen on at least `minTools` distinct tools whose tool word is at
 * least `minLift` times likelier there than on a tool at large, at most `perTerm` per query word, ranked by
 * evidence times log lift (a pointwise mutual information weighed by its support). The weight shipped is
 * P(tool says t | a request says q, the tool does not say q). Deterministic: no sampling, ties by name.
 */

export interface BridgeSet {
  name: string;
  tools: readonly SearchableTool[];
  queries: readonly RetrievalQuery[];
}

export interface BridgeTrainOptions {
  minTools?: number;
  minLift?: number;
  perTerm?: number;
  /** Pairs under this likelihood are dropped. */
  minWeight?: number;
}

/** The rules, fixed before the first leave-one-out run (docs/tool-search.md reports them with the figures). */
export const BRIDGE_TRAINING: Required<BridgeTrainOptions> = {
  minTools: 3,
  minLift: 2,
  perTerm: 4,
  minWeight: 0.05,
};

const TOKENS = { stem: true, stopWords: true } as const;

interface Unit {
  /** Share of the tool's queries holding each query word. */
  query: Map<string, number>;
  tool: Set<string>;
}

function toolTerms(tool: SearchableTool): Set<string> {
  const text = [nameWords(tool.name), tool.title ?? '', tool.description ?? ''].join(' \n ');
  return new Set(tokenize(text, TOKENS));
}

/** One unit per gold tool of each set, with the words of the queries it answered. */
function unitsOf(sets: readonly BridgeSet[]): Unit[] {
  const units: Unit[] = [];
  for (const set of sets) {
    const match = goldMatcher(set.tools);
    const byTool = new Map<SearchableTool, string[][]>();
    for (const query of set.queries) {
      const words = [...new Set(tokenize(query.query, TOKENS))];
      const golds = new Set(query.gold.flatMap((gold) => set.tools.filter(match(gold))));
      for (const tool of golds) {
        const list = byTool.get(tool);
        if (list) list.push(words);
        else byTool.set(tool, [words]);
      }
    }
    for (const [tool, queries] of byTool) {
      const counts = new Map<string, number>();
      for (const words of queries) for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
      units.push({
        query: new Map([...counts].map(([w, n]) => [w, n / queries.length])),
        tool: toolTerms(tool),
      });
    }
  }
  return units;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function trainBridge(sets: readonly BridgeSet[], options: BridgeTrainOptions = {}): VocabularyBridge {
  const { minTools, minLift, perTerm, minWeight } = { ...BRIDGE_TRAINING, ...options };
  const units = unitsOf(sets);
  const n = units.length;
  const toolDf = new Map<string, number>();
  for (const unit of units) for (const t of unit.tool) toolDf.set(t, (toolDf.get(t) ?? 0) + 1);
  // Per query word: its share summed over the tools lacking it, and per tool word the share and tool count.
  const mass = new Map<string, number>();
  const pairs = new Map<string, Map<string, { share: number; tools: number }>>();
  for (const unit of units)
    for (const [q, share] of unit.query) {
      if (unit.tool.has(q)) continue;
      mass.set(q, (mass.get(q) ?? 0) + share);
      const row = pairs.get(q) ?? new Map<string, { share: number; tools: number }>();
      pairs.set(q, row);
      for (const t of unit.tool) {
        const cell = row.get(t);
        if (cell) {
          cell.share += share;
          cell.tools++;
        } else row.set(t, { share, tools: 1 });
      }
    }
  const terms: Record<string, Array<readonly [string, number]>> = {};
  for (const q of [...pairs.keys()].sort()) {
    const total = mass.get(q)!;
    const kept = [...pairs.get(q)!]
      .flatMap(([t, { share, tools }]) => {
        if (tools < minTools) return [];
        const p = share / total;
        const lift = p / (toolDf.get(t)! / n);
        if (lift < minLift || p < minWeight) return [];
        return [{ t, p, score: share * Math.log(lift) }];
      })
      .sort((a, b) => b.score - a.score || (a.t < b.t ? -1 : 1))
      .slice(0, perTerm)
      .map(({ t, p }) => [t, round2(p)] as const)
      .filter(([, p]) => p > 0);
    if (kept.length > 0) terms[q] = kept;
  }
  return { ...TOKENS, terms };
}

/** The table as a file: one query word per line, so a change to it reads as a diff. */
export function bridgeJson(bridge: VocabularyBridge): string {
  const lines = Object.entries(bridge.terms).map(
    ([q, targets]) => `    ${JSON.stringify(q)}: ${JSON.stringify(targets)}`,
  );
  return `{\n  "stem": ${bridge.stem},\n  "stopWords": ${bridge.stopWords},\n  "terms": {\n${lines.join(',\n')}\n  }\n}\n`;
}
