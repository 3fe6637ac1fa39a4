import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/knowledge/bundle.js';
import { computationBlock } from '../../src/knowledge/computation.js';
import { isStale } from '../../src/knowledge/concept.js';
import { recordVerification, setFrontMatter } from '../../src/knowledge/edit.js';
import { writeIndexes } from '../../src/knowledge/index-file.js';
import { KnowledgeBase } from '../../src/knowledge/knowledge.js';
import { renderConcept } from '../../src/knowledge/render.js';
import { parseTimeValue } from '../../src/knowledge/time.js';
import { knowledgeTools } from '../../src/knowledge/tools.js';
import { actorKind, trustTier } from '../../src/knowledge/trust-tier.js';
import { REPO } from '../helpers/project.js';

const OKF = join(REPO, 'test', 'fixtures', 'okf');
const ACME = join(OKF, 'acme_retail');
const REAL = ['acme_retail', 'crypto_bitcoin', 'ga4'] as const;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tack-okf-'));
  dirs.push(dir);
  return dir;
}

/** A copy of a real bundle that a test may change. */
function copyOf(name: string): string {
  const dir = join(temp(), name);
  cpSync(join(OKF, name), dir, { recursive: true });
  return dir;
}

function write(root: string, files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function conceptFiles(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const path = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) return conceptFiles(dir, path);
    return e.name.endsWith('.md') && e.name !== 'index.md' && e.name !== 'log.md' ? [path] : [];
  });
}

describe('the three real bundles', () => {
  it('are conformant, and warn only about what is justified', async () => {
    const codes: Record<string, string[]> = {};
    for (const name of REAL) {
      const bundle = await loadBundle(join(OKF, name));
      expect(bundle.errors, name).toBe(0);
      expect(bundle.concepts.size, name).toBe(9);
      codes[name] = bundle.issues.map((i) => `${i.file} ${i.code}`);
    }
    // acme_retail: its log.md has front matter, two sources name team: authors, and the attester script was not
    // part of the published Markdown (SOURCE.txt), so three references to it are broken.
    expect(codes.acme_retail).toEqual([
      'attesters/index.md broken-link',
      'computations/gross-margin-period.md broken-link',
      'computations/revenue-ytd.md broken-link',
      'computations/revenue-ytd.md actor-team',
      'log.md log-front-matter',
      'tables/orders.md actor-team',
    ]);
    expect(codes.crypto_bitcoin).toEqual([]);
    expect(codes.ga4).toEqual([]);
  });

  it("derive acme_retail's trust tiers from `verified` alone: 8 human-reviewed, 1 unverified, 1 deprecated", async () => {
    const bundle = await loadBundle(ACME);
    const concepts = [...bundle.concepts.values()];
    expect(concepts.filter((c) => c.trust === 'human-reviewed')).toHaveLength(8);
    expect(concepts.filter((c) => c.trust === 'unverified').map((c) => c.id)).toEqual(['skills/run-on-bq']);
    expect(concepts.filter((c) => c.status === 'deprecated').map((c) => c.id)).toEqual([
      'metrics/gross-margin-legacy',
    ]);
    for (const name of ['crypto_bitcoin', 'ga4']) {
      const other = await loadBundle(join(OKF, name));
      expect(new Set([...other.concepts.values()].map((c) => c.trust))).toEqual(new Set(['unverified']));
    }
  });

  it('resolve paths file-relative first, then from the bundle root, and build backlinks', async () => {
    const bundle = await loadBundle(ACME);
    const edges = bundle.outlinks('computations/revenue-ytd');
    // `executor.resource: skills/run-on-bq.md` written in computations/ only resolves from the root.
    expect(edges).toContainEqual(
      expect.objectContaining({ kind: 'executor', to: 'skills/run-on-bq', toConcept: true }),
    );
    expect(edges).toContainEqual(
      expect.objectContaining({ kind: 'source', to: 'policies/revenue-recognition', toConcept: true }),
    );
    // The body link ./revenue-ytd.md in gross-margin-period resolves next to the file.
    expect(bundle.backlinks('computations/revenue-ytd').map((e) => `${e.from} ${e.kind}`)).toContain(
      'computations/gross-margin-period link',
    );
  });

  it('round-trip byte for byte when nothing changes, and keep every other key byte-stable when one does', async () => {
    for (const name of REAL) {
      for (const path of conceptFiles(join(OKF, name))) {
        const text = readFileSync(join(OKF, name, path), 'utf8');
        expect(setFrontMatter(text, {}), `${name}/${path}`).toBe(text);
      }
    }
    const dir = copyOf('crypto_bitcoin');
    const before = readFileSync(join(dir, 'tables/blocks.md'), 'utf8');
    const bundle = await loadBundle(dir);
    const concept = bundle.require('tables/blocks');
    expect(concept.trust).toBe('unverified');
    await recordVerification(dir, concept, { by: 'human:reviewer', at: '2026-11-30T09:00:00Z' });
    const after = readFileSync(join(dir, 'tables/blocks.md'), 'utf8');
    // Everything before the new key is the same bytes, the body too.
    const fmEnd = before.indexOf('\n---\n', 4);
    expect(after.startsWith(before.slice(0, fmEnd))).toBe(true);
    expect(after.endsWith(before.slice(fmEnd + 1))).toBe(true);
    const reread = (await loadBundle(dir)).require('tables/blocks');
    expect(reread.trust).toBe('human-reviewed');
    expect(reread.verified).toEqual([{ by: 'human:reviewer', at: parseTimeValue('2026-11-30T09:00:00Z') }]);
    const { verified: _v, ...rest } = reread.data;
    expect(rest).toEqual(concept.data);
  });

  it('append to an existing verified list, keeping unknown keys as written', async () => {
    const dir = write(temp(), {
      'm.md':
        '---\ntype: Metric\nx_custom: { keep: "as written" }  # a comment\nverified: { by: process:nightly, at: 2026-06-01 }\nzz: [1,2]\n---\nbody\n',
    });
    const concept = (await loadBundle(dir)).require('m');
    expect(concept.trust).toBe('machine-confirmed');
    await recordVerification(dir, concept, { by: 'human:ana', at: '2026-11-30T00:00:00Z' });
    const text = readFileSync(join(dir, 'm.md'), 'utf8');
    expect(text).toContain('x_custom: { keep: "as written" }  # a comment\n');
    expect(text).toContain('zz: [1,2]\n');
    const after = (await loadBundle(dir)).require('m');
    expect(after.verified.map((v) => v.by)).toEqual(['process:nightly', 'human:ana']);
    expect(after.trust).toBe('human-reviewed');
    await expect(recordVerification(dir, after, { by: 'team:finance' })).rejects.toThrow(/not an actor/);
    // A time the loader could not read back is refused before anything is written.
    const before = readFileSync(join(dir, 'm.md'), 'utf8');
    for (const at of ['yesterday', '2026-02-30T10:00:00Z', '2026-11-30T10:00:00'])
      await expect(recordVerification(dir, after, { by: 'human:ana', at }), at).rejects.toMatchObject({
        code: 'USAGE',
      });
    expect(readFileSync(join(dir, 'm.md'), 'utf8')).toBe(before);
  });
});

describe('conformance', () => {
  it('makes unparseable front matter, a missing type and broken reserved files errors, and leaves the file out', async () => {
    const dir = write(temp(), {
      'ok.md': '---\ntype: Some Unknown Type\nflavour: unknown keys are kept\n---\n# Hi\n',
      'no-type.md': '---\ntitle: no type\n---\nbody\n',
      'empty-type.md': '---\ntype: ""\n---\n',
      'bad-yaml.md': '---\ntype: [unclosed\n---\n',
      'plain.md': '# no front matter\n',
      'sub/index.md': '---\nokf_version: "0.2"\n---\n* [ok](../ok.md) - fine\n',
      'log.md': '# Log\n\n## 2026-03-01\n* x\n\n## March 2026\n* y\n\n## 2026-04-01\n* z\n',
    });
    const bundle = await loadBundle(dir);
    expect([...bundle.concepts.keys()]).toEqual(['ok']);
    expect(bundle.conformant).toBe(false);
    const errors = bundle.issues
      .filter((i) => i.severity === 'error')
      .map((i) => `${i.file}:${i.line} ${i.code}`);
    expect(errors).toEqual([
      'bad-yaml.md:2 front-matter-invalid',
      'empty-type.md:2 type-missing',
      'log.md:6 log-date',
      'no-type.md:1 type-missing',
      'plain.md:undefined front-matter-missing',
      'sub/index.md:1 index-front-matter',
    ]);
    expect(bundle.issues).toContainEqual(expect.objectContaining({ code: 'log-order', severity: 'warning' }));
    expect(bundle.require('ok').data.flavour).toBe('unknown keys are kept');
  });

  it('accepts a root index.md with okf_version, and keeps every hand-written index as it is', async () => {
    const dir = copyOf('acme_retail');
    const root = `---\nokf_version: "0.2"\n---\n${readFileSync(join(ACME, 'index.md'), 'utf8')}`;
    writeFileSync(join(dir, 'index.md'), root);
    const bundle = await loadBundle(dir);
    expect(bundle.okfVersion).toBe('0.2');
    expect(bundle.issues.filter((i) => i.file === 'index.md')).toEqual([]);
    // Every concept and folder is listed already (in the bundle's own words): nothing to write.
    expect(await writeIndexes(bundle)).toEqual([]);
    expect(readFileSync(join(dir, 'index.md'), 'utf8')).toBe(root);
    expect(readFileSync(join(dir, 'metrics/index.md'), 'utf8')).toBe(
      readFileSync(join(ACME, 'metrics/index.md'), 'utf8'),
    );
    const again = await loadBundle(dir);
    expect(again.errors).toBe(0);
    expect(again.indexes.get('metrics')?.entries).toHaveLength(3);
  });
});

describe('fields', () => {
  it('keeps time values as written and says which form each has', () => {
    expect(parseTimeValue('2026-09-01')).toEqual({
      raw: '2026-09-01',
      form: 'date',
      instant: Date.UTC(2026, 8, 1),
    });
    expect(parseTimeValue('2026-07-10T23:16:06+00:00')).toMatchObject({ form: 'datetime' });
    expect(parseTimeValue('2026-07-10T23:16:06+02:00')?.instant).toBe(Date.UTC(2026, 6, 10, 21, 16, 6));
    expect(parseTimeValue('2026-07-10T23:16:06')).toMatchObject({ form: 'datetime-without-offset' });
    expect(parseTimeValue('2026-02-30')).toMatchObject({ form: 'invalid' });
    expect(parseTimeValue('next week')).toMatchObject({ form: 'invalid' });
  });

  it('reads a bare date as stale from the start of that day in UTC', async () => {
    const dir = write(temp(), {
      'old.md': '---\ntype: Metric\nstale_after: 2026-09-01\ngenerated: { by: x/1, at: 2026-08-01 }\n---\n',
      'new.md': '---\ntype: Metric\nstale_after: 2026-09-01T12:00:00+00:00\n---\n',
    });
    const bundle = await loadBundle(dir);
    const old = bundle.require('old');
    expect(old.staleAfter?.raw).toBe('2026-09-01');
    expect(old.generated?.at?.raw).toBe('2026-08-01');
    expect(isStale(old, Date.UTC(2026, 7, 31, 23, 59, 59))).toBe(false);
    expect(isStale(old, Date.UTC(2026, 8, 1, 0, 0, 0))).toBe(true);
    expect(isStale(bundle.require('new'), Date.UTC(2026, 8, 1, 11))).toBe(false);
    const rendered = renderConcept(bundle, old, Date.UTC(2026, 8, 2));
    expect(rendered).toContain('Freshness: STALE since 2026-09-01 (bare date, from 00:00 UTC)');
  });

  it('reads a bare verified mapping as a list of one, and classifies actors', async () => {
    const dir = write(temp(), {
      'a.md': '---\ntype: T\nverified: { by: human:ana, at: 2026-06-25T09:00:00Z }\n---\n',
      'b.md':
        '---\ntype: T\nverified:\n  - { by: process:nightly, at: 2026-06-25T09:00:00Z }\n  - { by: lint/1.2, at: 2026-06-26T09:00:00Z }\n---\n',
      'c.md': '---\ntype: T\nverified: { by: team:finance }\n---\n',
    });
    const bundle = await loadBundle(dir);
    expect(bundle.require('a').verified).toHaveLength(1);
    expect(bundle.require('a').trust).toBe('human-reviewed');
    expect(bundle.require('b').trust).toBe('machine-confirmed');
    expect(bundle.require('c').trust).toBe('machine-confirmed');
    expect(bundle.issues).toContainEqual(expect.objectContaining({ file: 'c.md', code: 'actor-team' }));
    expect(actorKind('reference_agent/gemini-2.5-pro')).toBe('agent');
    expect(actorKind('somebody')).toBe('unknown');
    expect(trustTier([])).toBe('unverified');
  });

  it("reads an Attested Computation's contract, fenced or indented as in the spec", async () => {
    const bundle = await loadBundle(ACME);
    const contract = bundle.require('computations/revenue-ytd').computation!;
    expect(contract.runtime).toBe('bigquery');
    expect(contract.parameters).toEqual([{ name: 'year', type: 'integer', required: true }]);
    expect(contract.executor).toEqual({
      resource: 'skills/run-on-bq.md',
      receipt: ['job_id', 'executed_sql', 'result'],
    });
    expect(contract.inline?.info).toBe('sql');
    expect(contract.inline?.text).toMatch(/^SELECT\n {2}SUM\(/);
    expect(contract.inline?.text).toMatch(/EXTRACT\(YEAR FROM o\.order_ts\) = @year$/);
    const indented = computationBlock('# Computation\n\n    SELECT 1\n    FROM t\n\nprose\n# Next\n');
    expect(indented?.text).toBe('SELECT 1\nFROM t');
    expect(
      computationBlock('```sql\nSELECT 0\n```\n# Computation\nno code here\n# Other\n    SELECT 2\n'),
    ).toBeUndefined();
  });
});

describe('odd and hostile input', () => {
  it('reads odd YAML shapes without failing, each problem a warning that names the file and field', async () => {
    const dir = write(temp(), {
      'type-number.md': '---\ntype: 123\n---\n',
      'tags-number.md': '---\ntype: T\ntags: 5\n---\n',
      'verified-empty.md': '---\ntype: T\nverified: []\n---\n',
      'verified-null.md': '---\ntype: T\nverified: null\ngenerated:\n---\n',
      'verified-string.md': '---\ntype: T\nverified: human:ana\n---\n',
      'nested.md': `---\ntype: T\nextra: ${'['.repeat(3000)}${']'.repeat(3000)}\n---\n`,
      'tagged.md': '---\ntype: T\nstale_after: !!timestamp 2026-09-01\n---\n',
      'status.md': '---\ntype: T\nstatus: Deprecated\n---\n',
      'type-list.md': '---\ntype: [a, b]\n---\n',
      'contract.md':
        '---\ntype: Attested Computation\nruntime: sqlite\ncomputation: 5\nexecutor: [x]\nattester: x.py\n---\n# Computation\n    SELECT 1\n',
      'receipt.md':
        '---\ntype: Attested Computation\nruntime: sqlite\nexecutor: { receipt: job_id }\n---\n# Computation\n    SELECT 1\n',
    });
    const bundle = await loadBundle(dir);
    const found = (file: string) =>
      bundle.issues.filter((i) => i.file === file).map((i) => `${i.severity} ${i.code}`);
    // A number is a non-empty type (§11): read as its text, with a warning.
    expect(bundle.require('type-number').type).toBe('123');
    expect(found('type-number.md')).toEqual(['warning field-shape']);
    expect(found('type-list.md')).toEqual(['error type-missing']);
    expect(bundle.require('tags-number').tags).toEqual([]);
    expect(found('tags-number.md')).toEqual(['warning field-shape']);
    for (const id of ['verified-empty', 'verified-null', 'verified-string'])
      expect(bundle.require(id).trust, id).toBe('unverified');
    expect(found('verified-null.md')).toEqual([]);
    expect(found('verified-string.md')).toEqual(['warning field-shape']);
    expect(found('nested.md')).toEqual(['error front-matter-invalid']);
    // An explicit YAML timestamp still reads as the instant it names, not as Date#toString text.
    expect(bundle.require('tagged').staleAfter).toEqual({
      raw: '2026-09-01T00:00:00Z',
      form: 'datetime',
      instant: Date.UTC(2026, 8, 1),
    });
    // `Deprecated` read as stable would show retired content as current.
    expect(bundle.require('status').status).toBe('deprecated');
    expect(found('status.md')).toEqual(['warning status-unknown']);
    // A contract field of the wrong shape is named, not silently dropped.
    expect(bundle.issues.filter((i) => i.file === 'contract.md').map((i) => i.message)).toEqual([
      expect.stringMatching(/^`computation` should be a path/),
      expect.stringMatching(/^`executor` should be a mapping/),
      expect.stringMatching(/^`attester` should be a mapping/),
    ]);
    expect(found('receipt.md')).toEqual(['warning field-shape']);
  });

  it('survives an alias bomb, a file with a million links and a line built to make a regex backtrack', async () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
    ].join('\n');
    const dir = write(temp(), {
      'ok.md': '---\ntype: T\n---\n',
      'bomb.md': `---\ntype: T\n${bomb}\n---\n`,
      'many.md': `---\ntype: T\n---\n${'[x](missing.md) '.repeat(200_000)}\n`,
      'line.md': `---\ntype: T\n---\n${'[a]('.repeat(60_000)}\n${'!['.repeat(60_000)}\n`,
      'log.md': `---\n${bomb}\n---\n## 2026-01-01\n`,
      'sub/log.md': '---\n: not yaml: [\n---\n## 2026-01-01\n',
      // Headings with a long run of spaces: the heading pattern once backtracked cubically on these.
      'spaced/index.md': `# Things${' '.repeat(20_000)}x\n\n* [Calc](calc.md) - c\n`,
      'spaced/log.md': `## 2026-01-01${' '.repeat(20_000)}#\n* x\n`,
      'spaced/calc.md': `---\ntype: Attested Computation\nruntime: sqlite\n---\n# Computation${' '.repeat(20_000)}#\n\n    SELECT 1\n`,
    });
    // The cubic heading pattern took hours on these: a regression runs past the test's timeout.
    const bundle = await loadBundle(dir);
    expect([...bundle.concepts.keys()].sort()).toEqual(['line', 'many', 'ok', 'spaced/calc']);
    expect(bundle.require('spaced/calc').computation?.inline?.text).toBe('SELECT 1');
    expect(bundle.logs.get('spaced/log.md')?.entries.map((e) => e.date)).toEqual(['2026-01-01']);
    expect(bundle.indexes.get('spaced')?.entries[0]?.section).toBe(`Things${' '.repeat(20_000)}x`);
    expect(bundle.issues.filter((i) => i.file === 'bomb.md')).toEqual([
      expect.objectContaining({ severity: 'error', code: 'front-matter-invalid', line: 4 }),
    ]);
    expect(bundle.issues.filter((i) => i.file === 'bomb.md')[0]!.message).toMatch(/alias/i);
    // A log's front matter is ignored whether or not it reads: a warning, not a conformance error.
    const logIssues = bundle.issues.filter((i) => i.file.endsWith('log.md'));
    expect(new Set(logIssues.map((i) => `${i.file} ${i.severity} ${i.code}`))).toEqual(
      new Set(['log.md warning log-front-matter', 'sub/log.md warning log-front-matter']),
    );
    expect(bundle.errors).toBe(1);
    // One dead link written 200,000 times is one finding.
    expect(bundle.issues.filter((i) => i.file === 'many.md').map((i) => i.code)).toEqual(['broken-link']);
  });

  it('takes nothing in code for a link or a footnote, and follows what CommonMark calls a link', async () => {
    const dir = write(temp(), {
      'my folder/a concept.md': '---\ntype: T\n---\n',
      '..dots.md': '---\ntype: T\n---\n',
      'a.md': [
        '---',
        'type: T',
        'sources: [{ id: s1, resource: https://example.com }]',
        '---',
        'Uses [the concept](<my folder/a concept.md> "title") and [dots](/..dots.md).[^s1]',
        '',
        '```md',
        'An example: [x](nowhere.md)[^not-a-source]',
        '```',
        '',
        '    [indented](nowhere-either.md)',
        '',
        'Inline `[y](nor-here.md)` and ``[^nor-this]``.',
      ].join('\n'),
    });
    const bundle = await loadBundle(dir);
    expect(bundle.issues.filter((i) => i.file === 'a.md')).toEqual([]);
    expect(bundle.outlinks('a').map((e) => e.to)).toEqual(['my folder/a concept', '..dots']);
  });

  it('writes index entries that lead to files whose names hold ?, # or spaces', async () => {
    const dir = write(temp(), {
      'a/q?x.md': '---\ntype: T\n---\n',
      'a/no #1.md': '---\ntype: T\n---\n',
    });
    await writeIndexes(await loadBundle(dir));
    expect(readFileSync(join(dir, 'a/index.md'), 'utf8')).toContain('* [no #1](no%20%231.md)');
    const again = await loadBundle(dir);
    expect(again.issues).toEqual([]);
  });

  it('reads impossible calendar days as invalid, in datetimes and log headings too', async () => {
    expect(parseTimeValue('2026-02-30T00:00:00Z')).toMatchObject({ form: 'invalid' });
    expect(parseTimeValue('2026-09-01T24:00:00Z')).toMatchObject({ form: 'invalid' });
    expect(parseTimeValue('2028-02-29T12:00:00-05:30')).toEqual({
      raw: '2028-02-29T12:00:00-05:30',
      form: 'datetime',
      instant: Date.UTC(2028, 1, 29, 17, 30),
    });
    const dir = write(temp(), {
      'log.md': '# Log\n\n## 2026-02-30\n* x\n\n```md\n## not a heading\n```\n',
      'sub/index.md': '# Things\n\n* [A](a.md) - a\n\n```md\n* not an entry\n```\n',
      'sub/a.md': '---\ntype: T\n---\n',
    });
    const bundle = await loadBundle(dir);
    expect(bundle.issues.map((i) => `${i.file}:${i.line} ${i.code}`)).toEqual(['log.md:3 log-date']);
  });
});

describe('serving knowledge to the model', () => {
  it('searches with BM25 over title, description, tags and body, filtered by type and trust', async () => {
    const base = await KnowledgeBase.load(REAL.map((n) => join(OKF, n)));
    const top = base.search('revenue recognition policy', { k: 3 });
    expect(top[0]?.uri).toBe('okf://acme_retail/policies/revenue-recognition');
    expect(base.search('bitcoin blocks', { k: 1 })[0]?.bundle).toBe('crypto_bitcoin');
    const reviewed = base.search('gross margin', { k: 20, minTrust: 'human-reviewed' });
    expect(reviewed.length).toBeGreaterThan(0);
    expect(reviewed.every((h) => h.trust === 'human-reviewed')).toBe(true);
    const computations = base.search('revenue', { type: 'attested computation', k: 10 });
    expect(computations.map((h) => h.id).sort()).toEqual([
      'computations/gross-margin-period',
      'computations/revenue-ytd',
    ]);
    const legacy = base.search('legacy gross margin', { k: 1 })[0]!;
    expect(legacy).toMatchObject({ id: 'metrics/gross-margin-legacy', status: 'deprecated' });
  });

  it('puts type, trust, status, staleness and sources before the body', async () => {
    const base = await KnowledgeBase.load([ACME]);
    const [search, read] = knowledgeTools(base, { now: () => Date.UTC(2027, 0, 2) });
    const hits = await search!.execute({ query: 'gross margin legacy', k: 2 });
    expect(hits.text).toMatch(
      /okf:\/\/acme_retail\/metrics\/gross-margin-legacy: .*\[Metric · human-reviewed · deprecated/,
    );
    const concept = await read!.execute({ id: 'okf://acme_retail/computations/revenue-ytd' });
    const [header, body] = concept.text.split('\n---\n');
    expect(header).toContain('Type: Attested Computation');
    expect(header).toContain(
      'Trust: human-reviewed (verified by human:jsmith@acme, latest 2026-07-01T09:00:00Z (datetime))',
    );
    expect(header).toContain('Freshness: STALE since 2026-12-31T00:00:00Z (datetime)');
    expect(header).toContain(
      '[revenue-policy] Revenue Recognition Policy (FY2026): policies/revenue-recognition.md',
    );
    expect(header).toContain('Computation: runtime bigquery; parameters year: integer');
    expect(body).toMatch(/^# Computation/);
    const legacy = await read!.execute({ id: 'metrics/gross-margin-legacy' });
    expect(legacy.text).toContain('Status: deprecated: kept for history');
    const missing = await read!.execute({ id: 'metrics/gross-margin-lgacy' });
    expect(missing).toMatchObject({ isError: true });
    const bad = await search!.execute({ query: 'x', min_trust: 'very' });
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining('min_trust') });
  });

  it('summarises each bundle in one line', async () => {
    const base = await KnowledgeBase.load(REAL.map((n) => join(OKF, n)));
    const lines = base.summary(Date.UTC(2026, 10, 30)).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^acme_retail: 9 concepts \(8 human-reviewed, 1 unverified; 1 deprecated\); types: /,
    );
  });
});
