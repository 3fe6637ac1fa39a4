import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { afterEach, describe, expect, it } from 'vitest';
import { type KnowledgeBundle, loadBundle } from '../../src/knowledge/bundle.js';
import { KNOWLEDGE_CACHE_KIND, KNOWLEDGE_CACHE_VERSION } from '../../src/knowledge/bundle-cache.js';
import { KnowledgeBase } from '../../src/knowledge/knowledge.js';
import { readCacheFile, writeCacheFile } from '../../src/util/cache-file.js';
import type { TackWarning } from '../../src/util/warnings.js';
import { tack } from '../helpers/cli.js';
import { REPO } from '../helpers/project.js';

const OKF = join(REPO, 'test', 'fixtures', 'okf');
const BUNDLES = ['acme_retail', 'crypto_bitcoin', 'ga4', 'shop'] as const;
const QUERIES = [
  'gross margin',
  'bitcoin transactions',
  'sessions events',
  'orders revenue',
  'refund policy',
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tack-kcache-'));
  dirs.push(dir);
  return dir;
}
function copyOf(name: string): string {
  const dir = join(temp(), name);
  cpSync(join(OKF, name), dir, { recursive: true });
  return dir;
}

/** Everything a load produces that anyone reads: concepts (typed fields, data, text), edges, issues, search. */
/** A copy of a fixture bundle loaded once with a cache, and that cache as read back. */
async function cachedCopy(name: string) {
  const root = copyOf(name);
  const cacheDir = temp();
  const expected = outcome(await loadBundle(root));
  const cold = await loadBundle(root, { cacheDir });
  const read = readCacheFile(cold.cache!.file, {
    kind: KNOWLEDGE_CACHE_KIND,
    version: KNOWLEDGE_CACHE_VERSION,
  });
  if (!read.ok) throw new Error(read.message);
  return { root, cacheDir, expected, cold, read };
}

function outcome(bundle: KnowledgeBundle) {
  const base = new KnowledgeBase([bundle]);
  return {
    concepts: [...bundle.concepts.values()],
    indexes: [...bundle.indexes.values()],
    logs: [...bundle.logs.values()],
    edges: bundle.edges,
    issues: bundle.issues,
    backlinks: [...bundle.concepts.keys()].map((id) => bundle.backlinks(id)),
    hits: QUERIES.map((q) => base.search(q, { k: 10, now: 0 })),
  };
}

describe('the knowledge bundle cache', () => {
  it('gives, cold and warm, exactly what a load without it gives, for every real bundle', async () => {
    const cacheDir = temp();
    for (const name of BUNDLES) {
      const root = join(OKF, name);
      const fresh = outcome(await loadBundle(root));
      const cold = await loadBundle(root, { cacheDir });
      expect(cold.cache, name).toMatchObject({ loaded: 0, saved: true });
      expect(cold.cache!.parsed, name).toBeGreaterThan(3);
      expect(outcome(cold), name).toEqual(fresh);
      const warm = await loadBundle(root, { cacheDir });
      expect(warm.cache, name).toMatchObject({ loaded: cold.cache!.parsed, parsed: 0, saved: false });
      expect(outcome(warm), name).toEqual(fresh);
    }
    expect(readdirSync(cacheDir)).toHaveLength(BUNDLES.length);
  });

  it('after files change, re-reads only those, and works out links to and from them anew', async () => {
    const root = copyOf('acme_retail');
    const cacheDir = temp();
    const before = await loadBundle(root, { cacheDir });
    const total = before.cache!.parsed;
    // A concept others link to is removed; another is added that links to an existing one; one is edited.
    const removed = [...before.concepts.values()].find((c) => before.backlinks(c.id).length > 0)!;
    const linkers = before.backlinks(removed.id).map((e) => e.from);
    rmSync(join(root, removed.path));
    writeFileSync(
      join(root, 'metrics', 'okapi-index.md'),
      '---\ntype: Metric\ntitle: Okapi index\ndescription: Forest giraffes per hectare.\n---\n# Definition\n\nSee [gross margin](gross-margin.md).\n',
    );
    const edited = [...before.concepts.values()].find((c) => c.id !== removed.id && !linkers.includes(c.id))!;
    writeFileSync(
      join(root, edited.path),
      readFileSync(join(root, edited.path), 'utf8').replace(/\n# /, '\nZebra crossing.\n\n# '),
    );
    const after = await loadBundle(root, { cacheDir });
    expect(after.cache).toMatchObject({ loaded: total - 2, parsed: 2, saved: true });
    expect(outcome(after)).toEqual(outcome(await loadBundle(root)));
    // The files that link to the removed concept were not read afresh, yet their links are now broken.
    for (const from of linkers)
      expect(
        after.issues.some((i) => i.code === 'broken-link' && i.file === `${from}.md`),
        from,
      ).toBe(true);
    expect(after.backlinks('metrics/gross-margin').map((e) => e.from)).toContain('metrics/okapi-index');
    const base = new KnowledgeBase([after]);
    expect(base.search('okapi giraffes')[0]?.id).toBe('metrics/okapi-index');
    expect(base.search('zebra crossing')[0]?.id).toBe(edited.id);
    expect(base.search(removed.title, { k: 50 }).map((h) => h.id)).not.toContain(removed.id);
    expect((await loadBundle(root, { cacheDir })).cache).toMatchObject({ loaded: total - 1 + 1, parsed: 0 });
  });

  it('detects a damaged, foreign or outdated cache, warns, and rebuilds it', async () => {
    const root = copyOf('shop');
    const cacheDir = temp();
    const expected = outcome(await loadBundle(root));
    const file = (await loadBundle(root, { cacheDir })).cache!.file;
    const good = readFileSync(file);
    const flipped = Buffer.from(good);
    flipped[good.length - 100]! ^= 0x08;
    const otherDir = temp();
    const foreign = readFileSync((await loadBundle(join(OKF, 'ga4'), { cacheDir: otherDir })).cache!.file);
    const damage: Array<[string, () => void, RegExp]> = [
      ['a flipped byte', () => writeFileSync(file, flipped), /checksum/],
      ['half a file', () => writeFileSync(file, good.subarray(0, 200)), /bytes, its header says|cut short/],
      ['another bundle', () => writeFileSync(file, foreign), /is not a cache of the bundle/],
      ['nonsense', () => writeFileSync(file, 'hello'), /not a tack cache file/],
      [
        'a newer format',
        () => writeCacheFile(file, KNOWLEDGE_CACHE_KIND, KNOWLEDGE_CACHE_VERSION + 1, { meta: { json: {} } }),
        /this tack reads 1/,
      ],
      ['a docs cache', () => writeCacheFile(file, 'docs', 1, { meta: { json: {} } }), /holds a docs cache/],
    ];
    for (const [what, spoil, reason] of damage) {
      spoil();
      const warnings: TackWarning[] = [];
      const bundle = await loadBundle(root, { cacheDir, onWarning: (w) => warnings.push(w) });
      expect(bundle.cache?.problem, what).toMatch(reason);
      expect(warnings, what).toEqual([
        { code: 'INDEX_CACHE', message: expect.stringMatching(/the cache was not used/) },
      ]);
      expect(outcome(bundle), what).toEqual(expected);
      expect(bundle.cache, what).toMatchObject({ loaded: 0, saved: true });
      expect((await loadBundle(root, { cacheDir })).cache?.parsed, what).toBe(0);
    }
  });

  it('reads afresh only the files whose well-formed records do not fit them', async () => {
    const { root, cacheDir, expected, cold, read } = await cachedCopy('acme_retail');
    const meta = (read.sections.get('meta') as { json: { terms: string[]; records: unknown[][] } }).json;
    const offsets = read.sections.get('offsets') as Uint32Array;
    const entries = Uint32Array.from(read.sections.get('entries') as Uint32Array);
    const fm = (i: number) => meta.records[i]![2] as Record<string, unknown>;
    // A term past the table: that concept is indexed again from its record's front matter (not read afresh).
    entries[offsets[3]! + 5] = meta.terms.length + 1;
    fm(4).bodyStart = 10_000_000; // past the end of the text: read afresh
    writeCacheFile(cold.cache!.file, KNOWLEDGE_CACHE_KIND, KNOWLEDGE_CACHE_VERSION, {
      meta: { json: meta },
      offsets,
      entries,
    });
    const bundle = await loadBundle(root, { cacheDir });
    expect(bundle.cache).toMatchObject({ loaded: cold.cache!.parsed - 1, parsed: 1, saved: true });
    expect(outcome(bundle)).toEqual(expected);
  });

  it('does not use a cache with one malformed record: it warns, reads every file afresh and rebuilds the cache', async () => {
    const { root, cacheDir, expected, cold, read } = await cachedCopy('acme_retail');
    const original = JSON.stringify((read.sections.get('meta') as { json: unknown }).json);
    const spoils: Array<[string, (records: unknown[][]) => void]> = [
      ['a body offset that is no number', (r) => ((r[0]![2] as Record<string, unknown>).bodyStart = 'nine')],
      ['a negative key line', (r) => ((r[1]![2] as Record<string, unknown>).keyLines = [['type', -1]])],
      ['references of the wrong shape', (r) => (r[2]![3] = { links: 'none', footnotes: [] })],
      ['a record that is no record', (r) => (r[3] = ['x'])],
    ];
    for (const [what, spoil] of spoils) {
      const meta = JSON.parse(original) as { records: unknown[][] };
      spoil(meta.records);
      writeCacheFile(cold.cache!.file, KNOWLEDGE_CACHE_KIND, KNOWLEDGE_CACHE_VERSION, {
        meta: { json: meta },
        offsets: read.sections.get('offsets') as Uint32Array,
        entries: read.sections.get('entries') as Uint32Array,
      });
      const warnings: TackWarning[] = [];
      const bundle = await loadBundle(root, { cacheDir, onWarning: (w) => warnings.push(w) });
      expect(bundle.cache?.problem, what).toMatch(/record \d+ is malformed/);
      expect(warnings, what).toEqual([
        {
          code: 'INDEX_CACHE',
          message: expect.stringMatching(/the cache was not used.*record \d+ is malformed/),
        },
      ]);
      expect(bundle.cache, what).toMatchObject({ loaded: 0, saved: true });
      expect(outcome(bundle), what).toEqual(expected);
      expect((await loadBundle(root, { cacheDir })).cache, what).toMatchObject({ parsed: 0 });
    }
  });

  it("does not take one file's record for another: records made from other bytes are read afresh", async () => {
    const { root, cacheDir, expected, cold, read } = await cachedCopy('acme_retail');
    const meta = (read.sections.get('meta') as { json: { records: unknown[][] } }).json;
    // The first two records swap paths: each now names a file whose bytes are not the ones it was made from.
    const first = meta.records[0]![0];
    meta.records[0]![0] = meta.records[1]![0];
    meta.records[1]![0] = first;
    writeCacheFile(cold.cache!.file, KNOWLEDGE_CACHE_KIND, KNOWLEDGE_CACHE_VERSION, {
      meta: { json: meta },
      offsets: read.sections.get('offsets') as Uint32Array,
      entries: read.sections.get('entries') as Uint32Array,
    });
    const bundle = await loadBundle(root, { cacheDir });
    expect(bundle.cache).toMatchObject({ loaded: cold.cache!.parsed - 2, parsed: 2, saved: true });
    expect(outcome(bundle)).toEqual(expected);
  });

  it('keeps front matter JSON cannot hold (.inf, .nan, -0, a timestamp, an alias) by reading it again each time', async () => {
    const root = temp();
    writeFileSync(
      join(root, 'index.md'),
      '---\nokf_version: "0.2"\n---\n# Concepts\n\n* [Odd](odd.md) - odd values\n',
    );
    writeFileSync(
      join(root, 'odd.md'),
      '---\ntype: Reference\ntitle: Odd values\nratio: .inf\nmissing: .nan\nzero: -0\nwhen: !!timestamp 2026-01-02\nshared: &s {a: 1}\nagain: *s\n---\nBody.\n',
    );
    writeFileSync(join(root, 'plain.md'), '---\ntype: Reference\ntitle: Plain\n---\nSee [odd](odd.md).\n');
    const cacheDir = temp();
    const expected = outcome(await loadBundle(root));
    expect((await loadBundle(root, { cacheDir })).cache).toMatchObject({ parsed: 2, saved: true });
    const warm = await loadBundle(root, { cacheDir });
    expect(warm.cache).toMatchObject({ loaded: 2, parsed: 0 });
    const odd = warm.get('odd')!;
    expect(odd.data.ratio).toBe(Number.POSITIVE_INFINITY);
    expect(odd.data.missing).toBeNaN();
    expect(Object.is(odd.data.zero, -0)).toBe(true);
    // An alias gives the very object its anchor gave, as a load without the cache does.
    expect(odd.data.again).toBe(odd.data.shared);
    expect(outcome(warm)).toEqual(expected);
  });

  it('ranks several bundles as one MiniSearch index over all of them did', async () => {
    const cacheDir = temp();
    const bundles = await Promise.all(BUNDLES.map((name) => loadBundle(join(OKF, name), { cacheDir })));
    const base = new KnowledgeBase(bundles);
    const reference = new MiniSearch<{
      id: string;
      title: string;
      description: string;
      tags: string;
      body: string;
    }>({
      fields: ['title', 'description', 'tags', 'body'],
      searchOptions: { boost: { title: 3, description: 2, tags: 2 }, combineWith: 'OR', prefix: false },
    });
    for (const bundle of bundles)
      for (const c of bundle.concepts.values())
        reference.add({
          id: `${bundle.name}/${c.id}`,
          title: `${c.title} ${c.id.replace(/[/_-]+/g, ' ')}`,
          description: c.description ?? '',
          tags: c.tags.join(' '),
          body: c.body,
        });
    for (const query of [...QUERIES, 'table', 'daily active users']) {
      const want = reference.search(query).slice(0, 10);
      const got = base.search(query, { k: 10 });
      expect(
        got.map((h) => h.score),
        query,
      ).toEqual(want.map((h) => expect.closeTo(h.score, 9)));
      // Equal scores may come in either order; the sets of ids at each score agree.
      const byScore = (hits: Array<{ id: string; score: number }>) =>
        hits.map((h) => `${h.score.toFixed(9)} ${h.id}`).sort();
      expect(byScore(got.map((h) => ({ id: `${h.bundle}/${h.id}`, score: h.score }))), query).toEqual(
        byScore(want.map((h) => ({ id: String(h.id), score: h.score }))),
      );
    }
  });

  it('stays whole when two tack processes load the bundle at once, and the next one is warm', async () => {
    const root = copyOf('acme_retail');
    const home = temp();
    const env = { ...process.env, TACK_HOME: home };
    const search = () =>
      tack(['knowledge', 'search', 'gross margin', '-b', root, '--json'], { cwd: home, env });
    const [a, b] = await Promise.all([search(), search()]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, '', '']);
    expect(JSON.parse(a.stdout)).toEqual(JSON.parse(b.stdout));
    const cacheDir = join(home, 'state', 'indexes');
    expect(readdirSync(cacheDir)).toHaveLength(1);
    const warm = await loadBundle(root, { cacheDir });
    expect(warm.cache).toMatchObject({ parsed: 0, saved: false });
    expect(warm.cache?.problem).toBeUndefined();
    const c = await search();
    expect(JSON.parse(c.stdout)).toEqual(JSON.parse(a.stdout));
  });
});
