import { TextIndex } from '../util/text-index.js';

/**
 * How alike skill descriptions are, to warn when a model could not tell two skills apart. Each description
 * is searched (BM25, tack's TextIndex over the descriptions' content words) against all of them; the overlap of a with b is b's score divided by a's own
 * score, averaged both ways. BM25's IDF weighs the words every description shares ("use when the user asks")
 * near zero, so skills that only share phrasing do not look alike, while two paraphrases of one description do.
 * Measured: the eight Anthropic skills overlap at most 0.02 with each other; the paraphrased pair in
 * test/fixtures/skills/invalid/overlap, 0.68. The threshold sits between (test/skills/validate.test.ts holds both).
 */
export const OVERLAP_THRESHOLD = 0.5;

const STOP = new Set(
  'a an and any are as at be by can do for from has have how if in into is it its of on or so such that the their them this to use used uses using when whenever which while with you your skill skills'.split(
    ' ',
  ),
);

/** Lowercase words, a plural "s" dropped, stop words out. */
function term(word: string): string | null {
  const w = word.toLowerCase();
  if (w.length < 2 || STOP.has(w) || !/^[a-z0-9]+$/.test(w)) return null;
  return w.length > 3 ? w.replace(/s$/, '') : w;
}

/** The content words of a text, in order, repeats kept. */
function contentTerms(text: string): string[] {
  return (text.match(/[A-Za-z0-9]+/g) ?? []).map(term).filter((w): w is string => w !== null);
}

export function contentWords(text: string): Set<string> {
  return new Set(contentTerms(text));
}

export interface Overlap {
  a: number;
  b: number;
  score: number;
}

/** Every pair (by index, a < b) whose overlap reaches `threshold`, with its score in [0, 1]. */
export function overlaps(descriptions: readonly string[], threshold = OVERLAP_THRESHOLD): Overlap[] {
  if (descriptions.length < 2) return [];
  // Each description as its content words (contentTerms), so the index's own tokenizer finds exactly those.
  const index = new TextIndex({ fields: ['text'] });
  const texts = descriptions.map((text) => contentTerms(text).join(' '));
  for (const [id, text] of texts.entries()) index.add(String(id), [text]);
  // relative[a].get(b): b's score for a's description over a's own score.
  const relative = texts.map((text, a) => {
    const hits = index.search(text, descriptions.length);
    const scores = new Map(hits.map((hit) => [Number(hit.key), hit.score]));
    const self = scores.get(a) ?? 0;
    return new Map([...scores].map(([b, score]) => [b, self > 0 ? score / self : 0]));
  });
  const found: Overlap[] = [];
  for (let a = 0; a < descriptions.length; a++) {
    for (const [b, ab] of relative[a]!) {
      if (b <= a) continue;
      const score = (ab + (relative[b]!.get(a) ?? 0)) / 2;
      if (score >= threshold) found.push({ a, b, score });
    }
  }
  return found;
}
