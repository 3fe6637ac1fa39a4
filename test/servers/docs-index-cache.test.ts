import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DOCS_CACHE_KIND, DOCS_CACHE_VERSION, docsCacheFile } from '../../src/servers/docs/index-cache.js';
import { DocsLibrary } from '../../src/servers/docs/library.js';
import { readCacheFile, writeCacheFile } from '../../src/util/cache-file.js';
import { REPO, type TempProject, tempProject } from '../helpers/project.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'docs');
const QUERIES = [
  'warm start process',
  'install npm',
  'slow server startup timeout',
  'topic 7 lantern',
  'zebra',
];
const WORDS = 'lantern harbor quartz meadow falcon ember glacier orchard velvet canyon'.split(' ');

/** The fixture docs plus generated ones (front matter or not, CRLF, a BOM, .mdx), in a temporary project. */
function corpus(project: TempProject): { root: string; cacheDir: string } {
  const root = join(project.dir, 'docs');
  cpSync(FIXTURE, root, { recursive: true });
  mkdirSync(join(root, 'topics'));
  for (let i = 0; i < 60; i++) {
    const words = Array.from({ length: 40 }, (_, j) => WORDS[(i * 7 + j * 3) % WORDS.length]).join(' ');
    const body = `# Topic ${i}\n\nThe ${WORDS[i % 10]} paragraph: ${words}.\n\n\`\`\`sh\nsecret-code-${i}\n\`\`\`\n`;
    const text =
      i % 3 === 0
        ? `---\ntitle: "Topic ${i}: ${WORDS[i % 10]}"\ndescription: About ${WORDS[(i + 1) % 10]}\n---\n${body}`
        : body;
    const file = join(root, 'topics', `t${i}.${i % 10 === 9 ? 'mdx' : 'md'}`);
    writeFileSync(file, i % 5 === 0 ? `\uFEFF${text.replace(/\n/g, '\r\n')}` : text);
  }
  return { root, cacheDir: join(project.home, 'state', 'indexes') };
}

/** What a library serves: every document as shown and every query's hits. */
function served(library: DocsLibrary) {
  return {
    docs: library.list().map((d) => ({ ...d })),
    hits: QUERIES.map((q) => library.search(q, 5)),
  };
}

describe('the docs index cache', () => {
  it('loads a warm start instead of indexing, and serves exactly what a fresh index serves', async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    const fresh = served(await DocsLibrary.open(root));
    const cold = await DocsLibrary.open(root, { cacheDir });
    expect(cold.cache).toMatchObject({ loaded: 0, indexed: cold.size, saved: true });
    expect(cold.cache?.file).toBe(docsCacheFile(cacheDir, cold.root));
    expect(served(cold)).toEqual(fresh);
    const warm = await DocsLibrary.open(root, { cacheDir });
    expect(warm.cache).toMatchObject({ loaded: warm.size, indexed: 0, saved: false });
    expect(warm.size).toBe(65);
    expect(served(warm)).toEqual(fresh);
    expect(warm.warnings).toEqual([]);
  });

  it('re-indexes a changed file, indexes a new one, drops a removed one, and loads the rest', async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    await DocsLibrary.open(root, { cacheDir });
    writeFileSync(join(root, 'era-cache.md'), '# Renamed\n\nNow about giraffes.');
    writeFileSync(join(root, 'topics', 'zebra.md'), '# Zebra migration\n\nStriped animals.');
    rmSync(join(root, 'windows.md'));
    // Same size, same time, other bytes: the digest sees it.
    const t1 = join(root, 'topics', 't1.md');
    writeFileSync(t1, readFileSync(t1, 'utf8').replace('Topic 1', 'Topic X'));
    const library = await DocsLibrary.open(root, { cacheDir });
    expect(library.cache).toMatchObject({ loaded: 62, indexed: 3, saved: true });
    expect(served(library)).toEqual(served(await DocsLibrary.open(root)));
    expect(library.search('giraffes', 1)[0]?.slug).toBe('era-cache');
    expect(library.search('zebra', 1)[0]?.slug).toBe('topics/zebra');
    expect(library.get('windows')).toBeUndefined();
    expect(library.get('topics/t1')?.title).toBe('Topic X');
    const again = await DocsLibrary.open(root, { cacheDir });
    expect(again.cache).toMatchObject({ loaded: 65, indexed: 0, saved: false });
  });

  it('writes what changed while watching when it closes', async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    const library = await DocsLibrary.open(root, { cacheDir });
    await library.watch();
    writeFileSync(join(root, 'new-doc.md'), '# Okapi\n\nForest giraffes.');
    await expect.poll(() => library.search('okapi', 1)[0]?.slug, { timeout: 5000 }).toBe('new-doc');
    await library.close();
    const warm = await DocsLibrary.open(root, { cacheDir });
    expect(warm.cache).toMatchObject({ loaded: 66, indexed: 0, saved: false });
    expect(warm.search('okapi', 1)[0]?.slug).toBe('new-doc');
  });

  it('detects a corrupt, foreign or outdated cache, says so, and rebuilds it', async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    const expected = served(await DocsLibrary.open(root));
    const first = await DocsLibrary.open(root, { cacheDir });
    const file = first.cache!.file;
    const good = readFileSync(file);
    const flipped = Buffer.from(good);
    flipped[Math.floor(flipped.length * 0.7)]! ^= 0x10;
    const other = tempProject();
    const otherDocs = corpus(other);
    const otherLibrary = await DocsLibrary.open(otherDocs.root, { cacheDir: otherDocs.cacheDir });
    const foreignFolder = readFileSync(otherLibrary.cache!.file);
    other[Symbol.dispose]();
    const damage: Array<[string, () => void, RegExp]> = [
      ['one byte flipped', () => writeFileSync(file, flipped), /checksum/],
      ['cut short', () => writeFileSync(file, good.subarray(0, good.length >> 1)), /bytes, its header says/],
      ['random bytes', () => writeFileSync(file, Buffer.alloc(5000, 7)), /not a tack cache file/],
      ['another folder', () => writeFileSync(file, foreignFolder), /is not an index of/],
      [
        'another version',
        () => writeCacheFile(file, DOCS_CACHE_KIND, DOCS_CACHE_VERSION + 1, { meta: { json: {} } }),
        /format 2, this tack reads 1/,
      ],
      [
        'a folder in its place',
        () => {
          rmSync(file);
          mkdirSync(file);
        },
        /not a regular file/,
      ],
    ];
    for (const [what, spoil, reason] of damage) {
      spoil();
      const library = await DocsLibrary.open(root, { cacheDir });
      expect(library.cache?.problem, what).toMatch(reason);
      expect(library.warnings.join('\n'), what).toMatch(/index cache was not used/);
      expect(served(library), what).toEqual(expected);
      if (what === 'a folder in its place') {
        // It cannot be replaced by a file: the library says so and serves all the same.
        expect(library.cache?.saved).toBe(false);
        expect(library.warnings.join('\n')).toMatch(/index cache was not written/);
        rmSync(file, { recursive: true });
        continue;
      }
      expect(library.cache, what).toMatchObject({ loaded: 0, saved: true });
      expect((await DocsLibrary.open(root, { cacheDir })).cache, what).toMatchObject({
        loaded: 65,
        indexed: 0,
      });
    }
  });

  it('checks each record of a well-formed file: a bad entry is indexed again from its document', async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    const expected = served(await DocsLibrary.open(root));
    const file = (await DocsLibrary.open(root, { cacheDir })).cache!.file;
    const read = readCacheFile(file, { kind: DOCS_CACHE_KIND, version: DOCS_CACHE_VERSION });
    if (!read.ok) throw new Error(read.message);
    const meta = (read.sections.get('meta') as { json: { terms: string[]; records: unknown[][] } }).json;
    const entries = Uint32Array.from(read.sections.get('entries') as Uint32Array);
    const offsets = read.sections.get('offsets') as Uint32Array;
    // A term id past the table in the first document's entry, and a body offset past the end of the second.
    entries[offsets[0]! + 4] = meta.terms.length + 5;
    meta.records[1]![2] = 10_000_000;
    writeCacheFile(file, DOCS_CACHE_KIND, DOCS_CACHE_VERSION, { meta: { json: meta }, offsets, entries });
    const library = await DocsLibrary.open(root, { cacheDir });
    expect(library.cache).toMatchObject({ loaded: 63, indexed: 2, saved: true });
    expect(served(library)).toEqual(expected);
    // A malformed record makes the whole file unusable (util/index-cache.ts): a warning, and the cache rebuilt.
    for (const [what, row] of [
      ['a record that is no record', ['x']],
      ['a negative word count', [...meta.records[2]!.slice(0, 3), -1, ...meta.records[2]!.slice(4)]],
    ] as const) {
      meta.records[2] = [...row];
      writeCacheFile(file, DOCS_CACHE_KIND, DOCS_CACHE_VERSION, { meta: { json: meta }, offsets, entries });
      const again = await DocsLibrary.open(root, { cacheDir });
      expect(again.cache?.problem, what).toMatch(/record 2 is malformed/);
      expect(again.warnings.join('\n'), what).toMatch(/index cache was not used.*record 2 is malformed/);
      expect(again.cache, what).toMatchObject({ loaded: 0, saved: true });
      expect(served(again), what).toEqual(expected);
      expect((await DocsLibrary.open(root, { cacheDir })).cache, what).toMatchObject({
        loaded: 65,
        indexed: 0,
      });
    }
  });

  it("does not take one document's record for another: records made from other bytes are indexed again", async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    const expected = served(await DocsLibrary.open(root));
    const file = (await DocsLibrary.open(root, { cacheDir })).cache!.file;
    const read = readCacheFile(file, { kind: DOCS_CACHE_KIND, version: DOCS_CACHE_VERSION });
    if (!read.ok) throw new Error(read.message);
    const meta = (read.sections.get('meta') as { json: { records: unknown[][] } }).json;
    // The first two records swap paths: each now names a file whose bytes are not the ones it was made from.
    const first = meta.records[0]![0];
    meta.records[0]![0] = meta.records[1]![0];
    meta.records[1]![0] = first;
    writeCacheFile(file, DOCS_CACHE_KIND, DOCS_CACHE_VERSION, {
      meta: { json: meta },
      offsets: read.sections.get('offsets') as Uint32Array,
      entries: read.sections.get('entries') as Uint32Array,
    });
    const library = await DocsLibrary.open(root, { cacheDir });
    expect(library.cache).toMatchObject({ loaded: 63, indexed: 2, saved: true });
    expect(served(library)).toEqual(expected);
    // A knowledge bundle's cache put where the docs index goes is refused by its kind.
    writeCacheFile(file, 'knowledge', 1, { meta: { json: meta } });
    const foreign = await DocsLibrary.open(root, { cacheDir });
    expect(foreign.cache?.problem).toMatch(/holds a knowledge cache/);
    expect(foreign.warnings.join('\n')).toMatch(/index cache was not used/);
    expect(served(foreign)).toEqual(expected);
  });

  it('serves without a cache when its folder cannot be written', async () => {
    using project = tempProject();
    const { root } = corpus(project);
    writeFileSync(join(project.dir, 'not-a-folder'), '');
    const library = await DocsLibrary.open(root, { cacheDir: join(project.dir, 'not-a-folder') });
    expect(library.cache).toMatchObject({ saved: false, indexed: 65 });
    expect(library.warnings.join('\n')).toMatch(/index cache was not written/);
    expect(served(library)).toEqual(served(await DocsLibrary.open(root)));
  });

  it('keeps one whole cache when two processes open the folder at once', async () => {
    using project = tempProject();
    const { root, cacheDir } = corpus(project);
    const module = pathToFileURL(join(REPO, 'dist/src/servers/docs/library.js')).href;
    const source = `
      import { DocsLibrary } from ${JSON.stringify(module)};
      const library = await DocsLibrary.open(${JSON.stringify(root)}, { cacheDir: ${JSON.stringify(cacheDir)} });
      console.log(JSON.stringify({ cache: library.cache, hits: library.search('install npm', 3) }));`;
    const run = () =>
      new Promise<{ code: number; out: string }>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
        });
        child.on('exit', (code) => resolve({ code: code ?? 1, out }));
      });
    const results = await Promise.all([run(), run()]);
    const expected = (await DocsLibrary.open(root)).search('install npm', 3);
    for (const { code, out } of results) {
      expect(code).toBe(0);
      const parsed = JSON.parse(out) as { cache: { saved: boolean }; hits: unknown };
      expect(parsed.hits).toEqual(expected);
    }
    expect(readdirSync(cacheDir)).toHaveLength(1);
    const warm = await DocsLibrary.open(root, { cacheDir });
    expect(warm.cache).toMatchObject({ loaded: 65, indexed: 0 });
    expect(warm.cache?.problem).toBeUndefined();
    expect(warm.search('install npm', 3)).toEqual(expected);
  });
});
