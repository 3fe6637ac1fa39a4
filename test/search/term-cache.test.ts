import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadToolsFile } from '../../bench/tool-retrieval/metrics.js';
import { TOOL_TERMS_KIND, TOOL_TERMS_VERSION, ToolTermCache } from '../../src/search/term-cache.js';
import { type SearchableTool, type ServerProfile, ToolSearchIndex } from '../../src/search/tool-index.js';
import { readCacheFile, writeCacheFile } from '../../src/util/cache-file.js';
import { REPO } from '../helpers/project.js';

const TOOLS = loadToolsFile(join(REPO, 'test/fixtures/tool-search/tools.json'));
const SERVERS: Record<string, ServerProfile> = {
  github: { title: 'GitHub', description: 'Issues, pull requests and code on GitHub.' },
  filesystem: { instructions: 'Reads and writes files under the allowed folders.' },
};
const QUERIES = [
  'open a bug report in my repo',
  'which pull requests are waiting for review?',
  'read the first lines of a file',
  'remember that Ana prefers tea',
  'squash and merge PR 42',
];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function cacheFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tack-terms-'));
  dirs.push(dir);
  return join(dir, 'indexes', 'tool-terms.idx');
}

/** What a search shows: each hit's tool, score and explanation. */
function results(index: ToolSearchIndex) {
  return QUERIES.map((q) => index.searchMany([q, `${q} now`], 5, { explain: true }));
}

describe('the tool term cache', () => {
  const fresh = results(ToolSearchIndex.build(TOOLS, { servers: SERVERS }));

  it('builds, cold and warm, the index a build without it builds', () => {
    const file = cacheFile();
    const cold = new ToolTermCache(file);
    expect(results(ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: cold }))).toEqual(fresh);
    expect(cold.save()).toMatchObject({ ok: true });
    expect(cold.save()).toBeUndefined(); // nothing new since
    const warm = new ToolTermCache(file);
    expect(results(ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: warm }))).toEqual(fresh);
    // Every server came from the file: nothing was tokenized, so there is nothing to write.
    expect(warm.save()).toBeUndefined();
    expect(warm.problem).toBeUndefined();
  });

  it('tokenizes again only a server whose definitions or profile changed', () => {
    const file = cacheFile();
    const first = new ToolTermCache(file);
    ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: first });
    first.save();
    const changed: SearchableTool[] = TOOLS.map((t) =>
      t.server === 'memory' && t.name === TOOLS.find((x) => x.server === 'memory')!.name
        ? { ...t, description: `${t.description} Also remembers tea preferences.` }
        : t,
    );
    const second = new ToolTermCache(file);
    const index = ToolSearchIndex.build(changed, { servers: SERVERS, terms: second });
    expect(results(index)).toEqual(results(ToolSearchIndex.build(changed, { servers: SERVERS })));
    expect(second.save()).toMatchObject({ ok: true });
    const read = readCacheFile(file, { kind: TOOL_TERMS_KIND, version: TOOL_TERMS_VERSION });
    if (!read.ok) throw new Error(read.message);
    // The old memory entry stays (another catalog may still use it) until it ages out: five entries, not four.
    expect((read.sections.get('meta') as { json: { entries: unknown[] } }).json.entries).toHaveLength(5);
    // A replaced server (a list_changed) is tokenized from the cache when it comes back unchanged.
    const third = new ToolTermCache(file);
    const again = ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: third });
    again.replaceServer('github', TOOLS, SERVERS.github);
    expect(third.save()).toBeUndefined();
    const plain = ToolSearchIndex.build(TOOLS, { servers: SERVERS });
    plain.replaceServer('github', TOOLS, SERVERS.github);
    expect(results(again)).toEqual(results(plain));
  });

  it('drops entries not used for 30 days when it next writes', () => {
    const file = cacheFile();
    const first = new ToolTermCache(file);
    ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: first });
    first.save();
    const read = readCacheFile(file, { kind: TOOL_TERMS_KIND, version: TOOL_TERMS_VERSION });
    if (!read.ok) throw new Error(read.message);
    const meta = (read.sections.get('meta') as { json: { entries: Array<[string, number, number]> } }).json;
    for (const entry of meta.entries) entry[1] -= 40;
    writeCacheFile(file, TOOL_TERMS_KIND, TOOL_TERMS_VERSION, {
      meta: { json: meta },
      offsets: read.sections.get('offsets') as Uint32Array,
      ids: read.sections.get('ids') as Uint32Array,
    });
    // Only github is used now, and one tool of it is new: github's fresh entry is written, the old ones go.
    const github = TOOLS.filter((t) => t.server === 'github');
    const second = new ToolTermCache(file);
    ToolSearchIndex.build([...github, { server: 'github', name: 'new_tool', description: 'New.' }], {
      terms: second,
    });
    expect(second.save()).toMatchObject({ ok: true });
    const after = readCacheFile(file, { kind: TOOL_TERMS_KIND, version: TOOL_TERMS_VERSION });
    if (!after.ok) throw new Error(after.message);
    expect((after.sections.get('meta') as { json: { entries: unknown[] } }).json.entries).toHaveLength(1);
  });

  it('detects a damaged file or entry and tokenizes instead', () => {
    const file = cacheFile();
    const first = new ToolTermCache(file);
    ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: first });
    first.save();
    const good = readFileSync(file);
    const flipped = Buffer.from(good);
    flipped[good.length - 40]! ^= 0x02;
    writeFileSync(file, flipped);
    const damaged = new ToolTermCache(file);
    expect(results(ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: damaged }))).toEqual(fresh);
    expect(damaged.problem).toMatch(/checksum/);
    expect(damaged.save()).toMatchObject({ ok: true });
    // A well-formed file whose entries point past the term table: each such entry is a miss.
    const read = readCacheFile(file, { kind: TOOL_TERMS_KIND, version: TOOL_TERMS_VERSION });
    if (!read.ok) throw new Error(read.message);
    const ids = Uint32Array.from(read.sections.get('ids') as Uint32Array);
    ids.fill(0xffffff, 1, 4);
    writeCacheFile(file, TOOL_TERMS_KIND, TOOL_TERMS_VERSION, {
      meta: read.sections.get('meta') as { json: unknown },
      offsets: read.sections.get('offsets') as Uint32Array,
      ids,
    });
    const tampered = new ToolTermCache(file);
    expect(results(ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: tampered }))).toEqual(fresh);
    expect(tampered.problem).toBeUndefined();
    expect(tampered.save()).toMatchObject({ ok: true }); // the first server was tokenized again
  });

  it('rebuilds from a file cut short, of another version or of another kind, and says why', () => {
    const file = cacheFile();
    const first = new ToolTermCache(file);
    ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: first });
    first.save();
    const good = readFileSync(file);
    const damage: Array<[string, () => void, RegExp]> = [
      ['cut short', () => writeFileSync(file, good.subarray(0, good.length >> 1)), /bytes, its header says/],
      [
        'a newer version',
        () => writeCacheFile(file, TOOL_TERMS_KIND, TOOL_TERMS_VERSION + 1, { meta: { json: {} } }),
        /this tack reads 1/,
      ],
      ['a docs cache', () => writeCacheFile(file, 'docs', 1, { meta: { json: {} } }), /holds a docs cache/],
      [
        'the right kind, the wrong shape',
        () => writeCacheFile(file, TOOL_TERMS_KIND, TOOL_TERMS_VERSION, { meta: { json: { terms: 7 } } }),
        /is not a cache of tool search terms/,
      ],
    ];
    for (const [what, spoil, reason] of damage) {
      spoil();
      const cache = new ToolTermCache(file);
      expect(results(ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: cache })), what).toEqual(fresh);
      expect(cache.problem, what).toMatch(reason);
      expect(cache.save(), what).toMatchObject({ ok: true });
      expect(new ToolTermCache(file).problem, what).toBeUndefined();
    }
  });

  it("does not take one server's terms for another's with the same tools: the server's name is in the key", () => {
    const file = cacheFile();
    const first = new ToolTermCache(file);
    ToolSearchIndex.build(TOOLS, { servers: SERVERS, terms: first });
    first.save();
    // The same definitions under another server's name (a second GitHub, say): its server field differs.
    const renamed = TOOLS.map((t) => (t.server === 'github' ? { ...t, server: 'octo-enterprise' } : t));
    const second = new ToolTermCache(file);
    const index = ToolSearchIndex.build(renamed, { servers: SERVERS, terms: second });
    const plain = ToolSearchIndex.build(renamed, { servers: SERVERS });
    expect(results(index)).toEqual(results(plain));
    expect(index.search('octo enterprise issues', 3).map((h) => h.tool.server)).toContain('octo-enterprise');
    expect(second.save()).toMatchObject({ ok: true }); // the renamed server was tokenized
  });
});
