import type { WeightedTerm } from './bm25f.js';

/**
 * A vocabulary bridge: for a query word, the words a tool's name and description tend to hold when a request
 * says that word and the tool does not ("spreadsheet" -> `xlsx`, "popular" -> `rank`). Learned offline from
 * public tool-retrieval sets (bench/tool-retrieval/bridge-train.ts) as a small table: a signal beyond literal
 * words with no model, no endpoint and nothing downloaded at run time. Its terms join the query at a fraction of a
 * literal word's weight, so a tool that says what the request says still ranks first. Off by default, and no
 * table ships: trained on some public sets and scored on another, its gain did not hold (docs/tool-search.md).
 */
export interface VocabularyBridge {
  /** Terms are tool search's own (tokenize.ts): stemmed and without stop words, as the table was trained. */
  stem: boolean;
  stopWords: boolean;
  /** Query term -> tool terms, each with how likely a matching tool holds it (0-1), most likely first. */
  terms: Readonly<Record<string, ReadonlyArray<readonly [string, number]>>>;
}

/**
 * The tool terms a query's terms lead to, at `weight` times their likelihood; a term reached from several query
 * words adds up, to at most `weight`. Terms the query already has are left out: they count as literal words.
 */
export function bridgeTerms(
  bridge: VocabularyBridge,
  query: readonly string[],
  weight: number,
): WeightedTerm[] {
  if (weight <= 0) return [];
  const literal = new Set(query);
  const added = new Map<string, number>();
  for (const term of literal) {
    const targets = Object.hasOwn(bridge.terms, term) ? bridge.terms[term] : undefined;
    if (!targets) continue;
    for (const [target, p] of targets)
      if (!literal.has(target)) added.set(target, (added.get(target) ?? 0) + p);
  }
  return [...added].map(([term, p]) => ({ term, weight: weight * Math.min(1, p), expansion: true }));
}
