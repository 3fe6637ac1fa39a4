import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { forEachToken, queryTerms, TextIndex } from '../../src/util/text-index.js';
import { REPO } from '../helpers/project.js';

const FIELDS = ['title', 'description', 'body'] as const;
const BOOST = { title: 3, description: 2 };
type Doc = { id: string; title: string; description: string; body: string };

function miniSearch(docs: readonly Doc[]): MiniSearch<Doc> {
  const index = new MiniSearch<Doc>({
    fields: [...FIELDS],
    searchOptions: { boost: BOOST, combineWith: 'OR', prefix: false },
  });
  index.addAll(docs);
  return index;
}

function textIndex(docs: readonly Doc[]): TextIndex {
  const index = new TextIndex({ fields: FIELDS, boost: BOOST });
  for (const d of docs) index.add(d.id, [d.title, d.description, d.body]);
  return index;
}

/**
 * The two rankings agree: the same scores (to rounding: MiniSearch adds in another order and keeps a running
 * average of field lengths), in the same order except among documents whose scores tie.
 */
function expectSameRanking(query: string, expected: MiniSearch<Doc>, actual: TextIndex, k = 10): void {
  const want = expected.search(query).slice(0, k);
  const got = actual.search(query, k);
  expect(got.length, query).toBe(want.length);
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));
  want.forEach((hit, i) => {
    expect(close(got[i]!.score, hit.score), `${query}: rank ${i + 1}`).toBe(true);
    if (got[i]!.key !== hit.id) {
      // Only a tie may swap: the document MiniSearch put here has the same score in ours.
      const ours = actual.search(query, 1000).find((h) => h.key === hit.id);
      expect(ours && close(ours.score, hit.score), `${query}: ${hit.id}`).toBe(true);
    }
  });
}

/** Every Markdown file of the repository's docs and fixtures, as documents: real prose, code, tables, Unicode. */
function repositoryDocs(): Doc[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(REPO, 'docs'));
  walk(join(REPO, 'test/fixtures/okf'));
  walk(join(REPO, 'test/fixtures/docs'));
  return files.map((file) => {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    return {
      id: file.slice(REPO.length + 1),
      title: lines.find((l) => l.startsWith('#')) ?? file,
      description: lines.find((l) => l.length > 40 && !l.startsWith('#')) ?? '',
      body: text,
    };
  });
}

describe('forEachToken', () => {
  const split = (text: string) => text.split(/[\n\r\p{Z}\p{P}]+/u);
  const ours = (text: string) => {
    const tokens: string[] = [];
    const empty = forEachToken(text, (t) => tokens.push(t));
    return { tokens, empty };
  };

  it('gives the tokens of MiniSearch tokenizer, and says when it gives an empty one', () => {
    for (const text of [
      '',
      'plain words',
      '  leading and trailing  ',
      '(punctuation), everywhere!',
      'tab\tis not a separator',
      'naïve café — em dash… ellipsis',
      'ideographic\u3000space and no\u00a0break',
      'astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐄀 punctuation (U+10100 is Po)',
      'lone \ud800 surrogate',
    ]) {
      const want = split(text);
      const got = ours(text);
      expect(got.tokens, text).toEqual(want.filter((t) => t !== ''));
      expect(got.empty, text).toBe(want.includes(''));
    }
  });

  it('agrees with the split on any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), (text) => {
        const want = split(text);
        const got = ours(text);
        expect(got.tokens).toEqual(want.filter((t) => t !== ''));
        expect(got.empty).toBe(want.includes(''));
      }),
      { seed: 18, numRuns: 2000 },
    );
  });

  it('lower-cases query terms and keeps repeats', () => {
    expect(queryTerms('Gross MARGIN, gross')).toEqual(['gross', 'margin', 'gross']);
  });
});

describe('TextIndex', () => {
  it('ranks the repository docs and fixtures as MiniSearch does', () => {
    const docs = repositoryDocs();
    expect(docs.length).toBeGreaterThan(40);
    const expected = miniSearch(docs);
    const actual = textIndex(docs);
    for (const query of [
      'gross margin',
      'sandbox bubblewrap proxy',
      'Revenue revenue REVENUE',
      'era cache verdict',
      'tool search ranking bm25',
      'attested computation sql',
      'the',
      'knowledge bundle index.md',
      'nothing-matches-this-word',
      'café',
    ])
      expectSameRanking(query, expected, actual);
  });

  it('ranks generated documents as MiniSearch does, case variants and punctuation included', () => {
    const word = fc.constantFrom(
      'alpha',
      'Alpha',
      'ALPHA',
      'beta',
      'gamma',
      'delta',
      'café',
      'naïve',
      'x',
      'Ω',
    );
    const sep = fc.constantFrom(' ', ', ', '.', '\n', '\t', ' — ', '(', ')', '\u3000');
    const text = fc
      .array(fc.tuple(word, sep), { maxLength: 30 })
      .map((parts) => parts.map(([w, s]) => w + s).join(''));
    const doc = fc.record({ title: text, description: text, body: text });
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 1, maxLength: 25 }),
        fc.array(word, { minLength: 1, maxLength: 4 }),
        (raw, words) => {
          const docs = raw.map((d, i) => ({ id: `d${i}`, ...d }));
          expectSameRanking(words.join(' '), miniSearch(docs), textIndex(docs), 25);
        },
      ),
      { seed: 18, numRuns: 300 },
    );
  });

  it('after removals and replacements ranks as an index built afresh from what is left', () => {
    const docs = repositoryDocs();
    const changed = textIndex(docs);
    const kept = docs.filter((_, i) => i % 3 !== 0);
    for (const [i, d] of docs.entries()) if (i % 3 === 0) changed.remove(d.id);
    // A replaced document: the same key, new text.
    const edited = { ...kept[0]!, body: 'an entirely new body about gross margin' };
    changed.add(edited.id, [edited.title, edited.description, edited.body]);
    const fresh = [edited, ...kept.slice(1)];
    expect(changed.size).toBe(fresh.length);
    for (const query of ['gross margin', 'sandbox proxy', 'knowledge bundle'])
      expectSameRanking(query, miniSearch(fresh), changed);
  });

  it('keeps the k best the filter accepts', () => {
    const index = textIndex(repositoryDocs());
    const all = index.search('knowledge', 1000);
    const onlyFixtures = index.search('knowledge', 3, (key) => key.startsWith('test/'));
    expect(onlyFixtures).toEqual(all.filter((h) => h.key.startsWith('test/')).slice(0, 3));
    expect(index.search('knowledge', 0)).toEqual([]);
  });

  it('restores from a snapshot to the same ranking, with or without terms of its own', () => {
    const docs = repositoryDocs();
    const original = textIndex(docs);
    const snap = original.snapshot();
    expect(snap.keys.length).toBe(docs.length);
    const restore = (index: TextIndex) => {
      const mapping = index.terms(snap.terms);
      snap.keys.forEach((key, i) => {
        const entry = snap.entries.subarray(snap.offsets[i]!, snap.offsets[i + 1]!);
        expect(index.addEntry(key, entry, mapping)).toBe(true);
      });
      return index;
    };
    const empty = restore(new TextIndex({ fields: FIELDS, boost: BOOST }));
    const busy = new TextIndex({ fields: FIELDS, boost: BOOST });
    busy.add('other', ['zzz unrelated', 'words', 'margin']);
    busy.remove('other');
    restore(busy);
    for (const query of ['gross margin', 'sandbox proxy', 'café'])
      for (const index of [empty, busy]) expect(index.search(query, 10)).toEqual(original.search(query, 10));
  });

  it('refuses a malformed entry rather than indexing it', () => {
    const index = new TextIndex({ fields: ['a', 'b'] });
    const mapping = index.terms(['x', 'y']);
    const bad = [
      [1, 1, 1, 0, 1], // field a: one pair, term 0, count 1; field b missing
      [1, 1, 1, 5, 1, 0], // a term id past the table
      [1, 1, 1, 0, 0, 0], // a zero count
      [0, 1, 1, 0, 1, 0], // more terms than the field has tokens
      [1, 1, 9, 0, 1, 0], // a count longer than the entry
      [1, 1, 1, 0, 1, 0, 7], // trailing data
      [],
    ];
    for (const entry of bad)
      expect(index.addEntry('k', Uint32Array.from(entry), mapping), `${entry}`).toBe(false);
    expect(index.size).toBe(0);
    expect(index.addEntry('k', Uint32Array.from([1, 1, 1, 0, 1, 1, 1, 1]), mapping)).toBe(true);
    expect(index.search('y', 5).map((h) => h.key)).toEqual(['k']);
  });

  it('answers a hostile query (a million characters, every word distinct) in bounded time', () => {
    const index = textIndex(repositoryDocs());
    const query = Array.from({ length: 100_000 }, (_, i) => `w${i}`).join(' ');
    expect(index.search(query, 5)).toEqual([]);
    expect(index.search(`${query} sandbox`, 5).length).toBeGreaterThan(0);
  });
});
