import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/knowledge/bundle.js';
import { computationBlock } from '../../src/knowledge/computation.js';
import { isStale } from '../../src/knowledge/concept.js';
import { recordVerification, setFrontMatter } from '../../src/knowledge/edit.js';
import { renderIndexes, writeIndexes } from '../../src/knowledge/index-file.js';
import { KnowledgeBase } from '../../src/knowledge/knowledge.js';
import { renderConcept } from '../../src/knowledge/render.js';
import { parseTimeValue } from '../../src/knowledge/time.js';
import { knowledgeTools } from '../../src/knowledge/tools.js';
import { actorKind, trustTier } from '../../src/knowledge/trust.js';
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

  it('accepts a root index.md with okf_version, and keeps it when indexes are regenerated', async () => {
    const dir = copyOf('acme_retail');
    writeFileSync(
      join(dir, 'index.md'),
      `---\nokf_version: "0.2"\n---\n${readFileSync(join(ACME, 'index.md'), 'utf8')}`,
    );
    const bundle = await loadBundle(dir);
    expect(bundle.okfVersion).toBe('0.2');
    expect(bundle.issues.filter((i) => i.file === 'index.md')).toEqual([]);
    const written = await writeIndexes(bundle);
    expect(written).toEqual(
      expect.arrayContaining(['index.md', 'metrics/index.md', 'computations/index.md']),
    );
    const root = readFileSync(join(dir, 'index.md'), 'utf8');
    expect(root.startsWith('---\nokf_version: "0.2"\n---\n')).toBe(true);
    expect(root).toContain('# Subdirectories');
    const metrics = readFileSync(join(dir, 'metrics/index.md'), 'utf8');
    expect(metrics).toContain('# Metric\n');
    expect(metrics).toContain(
      '* [Gross Margin (legacy, pre-FY2026)](gross-margin-legacy.md) - Retired gross-margin definition',
    );
    const again = await loadBundle(dir);
    expect(again.errors).toBe(0);
    expect(again.indexes.get('metrics')?.entries).toHaveLength(3);
    expect(renderIndexes(again)).toEqual(renderIndexes(bundle));
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
