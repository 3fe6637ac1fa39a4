import { execFileSync, spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheFileName, readCacheFile, writeCacheFile } from '../../src/util/cache-file.js';
import { REPO } from '../helpers/project.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tack-cache-file-'));
  dirs.push(dir);
  return dir;
}

const KIND = { kind: 'test', version: 3 };
const sections = () => ({
  meta: { json: { records: [{ path: 'a.md', digest: 'ab' }], terms: ['x', 'ÿ', '日本'] } },
  entries: Uint32Array.from([1, 2, 3, 0xffffffff]),
  weights: Float64Array.from([0.5, -1, Number.MAX_VALUE]),
  flags: Uint8Array.from([1, 0, 1]),
});

describe('cache files', () => {
  it('round-trips JSON and typed-array sections', () => {
    const path = join(tempDir(), 'nested', 'a.idx');
    const written = writeCacheFile(path, KIND.kind, KIND.version, sections());
    expect(written.ok).toBe(true);
    const read = readCacheFile(path, KIND);
    if (!read.ok) throw new Error(read.message);
    expect(read.sections.get('meta')).toEqual(sections().meta);
    expect([...(read.sections.get('entries') as Uint32Array)]).toEqual([1, 2, 3, 0xffffffff]);
    expect([...(read.sections.get('weights') as Float64Array)]).toEqual([0.5, -1, Number.MAX_VALUE]);
    expect([...(read.sections.get('flags') as Uint8Array)]).toEqual([1, 0, 1]);
    expect(read.bytes).toBe(written.bytes);
    // Only the file itself is left: the temporary file was renamed.
    expect(readdirSync(join(path, '..'))).toEqual(['a.idx']);
  });

  it('says why a file is not used, and never throws', () => {
    const dir = tempDir();
    const path = join(dir, 'a.idx');
    expect(readCacheFile(path, KIND)).toMatchObject({ ok: false, reason: 'missing' });
    writeCacheFile(path, KIND.kind, KIND.version, sections());
    const good = readFileSync(path);
    const variant = (name: string, bytes: Uint8Array) => {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      return readCacheFile(file, KIND);
    };
    const flipped = Buffer.from(good);
    flipped[flipped.length - 3]! ^= 0x40;
    const header = Buffer.from(good);
    header[20]! ^= 0x01;
    const cases: Array<[string, Uint8Array, string]> = [
      ['empty', new Uint8Array(0), 'foreign'],
      ['json', Buffer.from('{"records": []}'), 'foreign'],
      ['sqlite', Buffer.from('SQLite format 3\0........................'), 'foreign'],
      ['truncated', good.subarray(0, good.length - 10), 'corrupt'],
      ['cut-header', good.subarray(0, 30), 'corrupt'],
      ['flipped', flipped, 'corrupt'],
      ['header-byte', header, 'corrupt'],
      ['longer', Buffer.concat([good, Buffer.from('extra')]), 'corrupt'],
    ];
    for (const [name, bytes, reason] of cases)
      expect(variant(name, bytes), name).toMatchObject({ ok: false, reason });
    expect(readCacheFile(path, { kind: 'other', version: 3 })).toMatchObject({
      ok: false,
      reason: 'foreign',
    });
    expect(readCacheFile(path, { kind: 'test', version: 4 })).toMatchObject({ ok: false, reason: 'version' });
    expect(readCacheFile(path, { ...KIND, maxBytes: 10 })).toMatchObject({ ok: false, reason: 'too-large' });
    // Not regular files: a folder, and a FIFO that a blocking open would wait on forever.
    mkdirSync(join(dir, 'folder.idx'));
    expect(readCacheFile(join(dir, 'folder.idx'), KIND)).toMatchObject({ ok: false, reason: 'foreign' });
    execFileSync('mkfifo', [join(dir, 'fifo.idx')]);
    expect(readCacheFile(join(dir, 'fifo.idx'), KIND)).toMatchObject({ ok: false, reason: 'foreign' });
  });

  it('reports a folder it cannot write to instead of throwing', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), 'not a folder');
    const result = writeCacheFile(join(dir, 'file', 'a.idx'), KIND.kind, KIND.version, sections());
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/cannot write/);
  });

  it('replaces a link planted at the path rather than writing through it', () => {
    const dir = tempDir();
    const target = join(dir, 'elsewhere.txt');
    writeFileSync(target, 'keep me');
    symlinkSync(target, join(dir, 'a.idx'));
    expect(writeCacheFile(join(dir, 'a.idx'), KIND.kind, KIND.version, sections()).ok).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
    expect(readCacheFile(join(dir, 'a.idx'), KIND).ok).toBe(true);
  });

  it('removes temporary files that a writer which died left behind, and only old ones', () => {
    const dir = tempDir();
    const old = join(dir, 'a.idx.999.dead.tmp');
    const recent = join(dir, 'a.idx.998.busy.tmp');
    writeFileSync(old, 'half');
    writeFileSync(recent, 'half');
    const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(old, hourAgo, hourAgo);
    writeCacheFile(join(dir, 'a.idx'), KIND.kind, KIND.version, sections());
    expect(readdirSync(dir).sort()).toEqual(['a.idx', 'a.idx.998.busy.tmp']);
  });

  it('names one file per kind and key', () => {
    expect(cacheFileName('docs', '/a')).toMatch(/^docs-[0-9a-f]{24}\.idx$/);
    expect(cacheFileName('docs', '/a')).not.toBe(cacheFileName('docs', '/b'));
    expect(cacheFileName('docs', '/a')).not.toBe(cacheFileName('knowledge', '/a'));
  });

  it('stays whole while processes write and read it at once', async () => {
    const dir = tempDir();
    const path = join(dir, 'shared.idx');
    const module = pathToFileURL(join(REPO, 'dist/src/util/cache-file.js')).href;
    // Each writer writes its own large payload 20 times; readers must only ever see one whole file.
    const writer = (id: number) => `
      import { writeCacheFile } from ${JSON.stringify(module)};
      const entries = new Uint32Array(2_000_000).fill(${id});
      for (let i = 0; i < 20; i++) {
        const r = writeCacheFile(${JSON.stringify(path)}, 'test', 3, { meta: { json: { writer: ${id} } }, entries });
        if (!r.ok) { console.error(r.message); process.exit(1); }
      }`;
    const run = (source: string) =>
      new Promise<number>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: 'inherit' });
        child.on('exit', (code) => resolve(code ?? 1));
      });
    const writers = Promise.all([run(writer(1)), run(writer(2))]);
    let reads = 0;
    let settled = false;
    void writers.then(() => {
      settled = true;
    });
    while (!settled) {
      const read = readCacheFile(path, KIND);
      if (read.ok) {
        reads++;
        const id = (read.sections.get('meta') as { json: { writer: number } }).json.writer;
        const entries = read.sections.get('entries') as Uint32Array;
        expect(entries.length).toBe(2_000_000);
        expect(entries[0]).toBe(id);
        expect(entries[entries.length - 1]).toBe(id);
      } else expect(read.reason).toBe('missing');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await writers).toEqual([0, 0]);
    expect(reads).toBeGreaterThan(0);
    expect(readdirSync(dir)).toEqual(['shared.idx']);
  });
});
