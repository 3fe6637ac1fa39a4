import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/knowledge/bundle.js';
import { GENERATED_BEGIN, GENERATED_END, planIndexes, writeIndexes } from '../../src/knowledge/index-file.js';
import { tack } from '../helpers/cli.js';
import { REPO } from '../helpers/project.js';

const OKF = join(REPO, 'test', 'fixtures', 'okf');
const REAL = ['acme_retail', 'crypto_bitcoin', 'ga4'] as const;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tack-index-'));
  dirs.push(dir);
  return dir;
}

/** The environment with a tack home of its own: the user's (~/.local/state/tack) is shared by every worker and run. */
function isolated(): Record<string, string | undefined> {
  return { ...process.env, TACK_HOME: join(temp(), 'home') };
}

function write(root: string, files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const read = (root: string, path: string) => readFileSync(join(root, path), 'utf8');

function concept(type: string, title: string, description: string): string {
  return `---\ntype: ${type}\ntitle: ${title}\ndescription: ${description}\n---\n\nBody.\n`;
}

/** What people wrote in metrics/index.md: prose, a comment, a curated entry in their own words, a section. */
const HAND_WRITTEN = [
  '# Metrics',
  '',
  'Curated by the finance team. <!-- ask Ana before changing -->',
  '',
  '* [Revenue (FY2026 definition)](revenue.md) - What finance reports as revenue.',
  '',
  '## Notes',
  '',
  'Margins are restated quarterly.',
  '',
].join('\n');

describe('tack knowledge index', () => {
  it('shows a diff and writes nothing by default (exit 1); --write keeps hand-written lines and adds the rest', async () => {
    const kb = write(join(temp(), 'kb'), {
      'index.md': '---\nokf_version: "0.2"\n---\n\n# Acme\n\nStart with [revenue](metrics/revenue.md).\n',
      'metrics/index.md': HAND_WRITTEN,
      'metrics/revenue.md': concept('Metric', 'Revenue', 'Recognized revenue.'),
      'metrics/margin.md': concept('Metric', 'Gross Margin', 'Revenue minus COGS.'),
      'metrics/old.md': concept('Metric', 'Old metric', 'Retired.'),
    });
    const rootBefore = read(kb, 'index.md');

    const dry = await tack(['knowledge', 'index', kb], { cwd: kb, env: isolated() });
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain('--- metrics/index.md\tnow');
    expect(dry.stdout).toContain('+++ metrics/index.md\twith --write');
    expect(dry.stdout).toContain('+* [Gross Margin](margin.md) - Revenue minus COGS.');
    expect(dry.stdout).toContain('+* [metrics](metrics/index.md) - Metrics; 3 concepts');
    // Nothing is taken away: every hand-written line stays.
    expect(dry.stdout).not.toMatch(/^-(?!--)/m);
    expect(dry.stderr).toContain('kb: 2 of 2 index files would change; nothing was written');
    expect(read(kb, 'metrics/index.md')).toBe(HAND_WRITTEN);
    expect(read(kb, 'index.md')).toBe(rootBefore);

    const written = await tack(['knowledge', 'index', kb, '--write'], { cwd: kb, env: isolated() });
    expect(written.code).toBe(0);
    expect(written.stdout).toBe('kb: wrote metrics/index.md, index.md\n');
    expect(read(kb, 'metrics/index.md')).toBe(
      [
        HAND_WRITTEN,
        GENERATED_BEGIN,
        '# Metric',
        '',
        '* [Gross Margin](margin.md) - Revenue minus COGS.',
        '* [Old metric](old.md) - Retired.',
        GENERATED_END,
        '',
      ].join('\n'),
    );
    expect(read(kb, 'index.md')).toBe(
      `${rootBefore}\n${GENERATED_BEGIN}\n# Subdirectories\n\n* [metrics](metrics/index.md) - Metrics; 3 concepts\n${GENERATED_END}\n`,
    );
    const current = await tack(['knowledge', 'index', kb], { cwd: kb, env: isolated() });
    expect(current).toMatchObject({ code: 0, stdout: '' });
    expect(current.stderr).toContain('kb: 2 index files up to date');

    // The concept "old" is removed, "churn" added; someone curates Gross Margin and adds a line for a concept
    // that is gone. Only the generated block changes; the curated lines stay where they are.
    unlinkSync(join(kb, 'metrics/old.md'));
    write(kb, { 'metrics/churn.md': concept('Metric', 'Churn', 'Customers lost.') });
    const edited = read(kb, 'metrics/index.md').replace(
      '* [Revenue (FY2026 definition)](revenue.md) - What finance reports as revenue.\n',
      '* [Revenue (FY2026 definition)](revenue.md) - What finance reports as revenue.\n' +
        '* [Margin](margin.md) - Our margin, as the board sees it.\n' +
        '* [Legacy revenue](legacy.md) - The old definition.\n',
    );
    writeFileSync(join(kb, 'metrics/index.md'), edited);

    const again = await tack(['knowledge', 'index', kb, '--write'], { cwd: kb, env: isolated() });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(
      'warning: kb/metrics/index.md:7: entry "Legacy revenue" points at "legacy.md", which is not in the bundle; kept',
    );
    const after = read(kb, 'metrics/index.md');
    expect(after).toBe(
      edited.replace(
        '* [Gross Margin](margin.md) - Revenue minus COGS.\n* [Old metric](old.md) - Retired.\n',
        '* [Churn](churn.md) - Customers lost.\n',
      ),
    );
    expect(after.match(/margin\.md/g)).toHaveLength(1);
    expect(after).not.toContain('old.md');
    expect((await loadBundle(kb)).errors).toBe(0);
  }, 60_000);

  it('shows no diff for the real bundles, whose indexes are current (exit 0)', async () => {
    for (const name of REAL) {
      const plan = await planIndexes(await loadBundle(join(OKF, name)));
      expect(
        plan.files.filter((f) => f.changed).map((f) => f.path),
        name,
      ).toEqual([]);
      expect(plan.files.length, name).toBeGreaterThan(0);
    }
    const run = await tack(['knowledge', 'index', ...REAL.map((name) => join(OKF, name)), '--json'], {
      cwd: REPO,
    });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Array<{ bundle: string; files: Array<{ status: string }> }>;
    expect(out.map((b) => b.bundle)).toEqual([...REAL]);
    for (const bundle of out) expect(bundle.files.every((f) => f.status === 'unchanged')).toBe(true);
    // acme_retail lists attesters/sql_equality.py, which its Markdown copy leaves out: a person's line, kept.
    expect(run.stderr).toContain('acme_retail/attesters/index.md:3: entry "sql_equality.py"');
  }, 60_000);
});

describe('planIndexes and writeIndexes', () => {
  it("writes the same index.md whatever the machine's locale (a committed file must not churn by who runs it)", async () => {
    const written = [];
    for (const locale of ['sv_SE.UTF-8', 'en_US.UTF-8']) {
      const kb = write(temp(), {
        'zebra.md': concept('Animal', 'Zebra', 'Striped.'),
        'apfel.md': concept('Animal', 'Äpfel', 'Not an animal.'),
        'oel.md': concept('Ölig', 'Öl', 'Oily.'),
      });
      const run = await tack(['knowledge', 'index', kb, '--write'], {
        cwd: kb,
        env: { ...isolated(), LC_ALL: locale, LANG: locale },
      });
      expect(run.stderr).toBe('');
      written.push(read(kb, 'index.md'));
    }
    expect(written[0]).toBe(written[1]);
    // English collation: Äpfel before Zebra (Swedish puts Ä after Z), Animal before Ölig.
    expect(written[0]!.indexOf('[Äpfel]')).toBeLessThan(written[0]!.indexOf('[Zebra]'));
    expect(written[0]!.indexOf('# Animal')).toBeLessThan(written[0]!.indexOf('# Ölig'));
  });

  it('writes a new bundle its indexes, and a second run changes nothing', async () => {
    const kb = write(temp(), {
      'a/x.md': concept('T', 'X', 'An x.'),
      'a/b/y.md': concept('U', 'Y', 'A y.'),
      'top.md': concept('T', 'Top', 'At the top.'),
    });
    expect((await writeIndexes(await loadBundle(kb))).sort()).toEqual([
      'a/b/index.md',
      'a/index.md',
      'index.md',
    ]);
    expect(read(kb, 'a/index.md')).toBe(
      `${GENERATED_BEGIN}\n# T\n\n* [X](x.md) - An x.\n\n# Subdirectories\n\n* [b](b/index.md) - U; 1 concept\n${GENERATED_END}\n`,
    );
    const bundle = await loadBundle(kb);
    expect(bundle.issues).toEqual([]);
    expect((await planIndexes(bundle)).files.filter((f) => f.changed)).toEqual([]);
  });

  it('refuses an index whose markers are broken, and writes nothing', async () => {
    const kb = write(temp(), {
      'x.md': concept('T', 'X', 'An x.'),
      'sub/y.md': concept('T', 'Y', 'A y.'),
      'index.md': `# Mine\n\n${GENERATED_BEGIN}\n* [X](x.md) - An x.\n`,
    });
    await expect(writeIndexes(await loadBundle(kb))).rejects.toMatchObject({
      code: 'KNOWLEDGE_BUNDLE',
      message: 'index.md:3: the generated index is not closed',
    });
    write(kb, { 'index.md': `${GENERATED_END}\n${GENERATED_BEGIN}\n` });
    await expect(planIndexes(await loadBundle(kb))).rejects.toMatchObject({
      message: expect.stringContaining('a closing marker of the generated index before its opening one'),
    });
    const cli = await tack(['knowledge', 'index', kb, '--write'], { cwd: kb, env: isolated() });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('error: index.md:1: a closing marker');
    expect(read(kb, 'index.md')).toBe(`${GENERATED_END}\n${GENERATED_BEGIN}\n`);
    expect(() => read(kb, 'sub/index.md')).toThrow();
  }, 30_000);

  it('keeps CRLF line ends and markers in code blocks as they are', async () => {
    const kb = write(temp(), {
      'x.md': concept('T', 'X', 'An x.'),
      'index.md': `# Mine\r\n\r\n\`\`\`\r\n${GENERATED_END}\r\n\`\`\`\r\n`,
    });
    await writeIndexes(await loadBundle(kb));
    expect(read(kb, 'index.md')).toBe(
      `# Mine\r\n\r\n\`\`\`\r\n${GENERATED_END}\r\n\`\`\`\r\n\r\n${GENERATED_BEGIN}\r\n# T\r\n\r\n* [X](x.md) - An x.\r\n${GENERATED_END}\r\n`,
    );
    expect((await planIndexes(await loadBundle(kb))).files.filter((f) => f.changed)).toEqual([]);
  });

  it('does not write through an index.md that is a symbolic link', async () => {
    const outside = join(temp(), 'bashrc');
    writeFileSync(outside, 'export PATH\n');
    const kb = write(temp(), { 'x.md': concept('T', 'X', 'An x.') });
    symlinkSync(outside, join(kb, 'index.md'));
    const plan = await planIndexes(await loadBundle(kb));
    expect(plan.files).toEqual([]);
    expect(plan.warnings).toEqual([expect.objectContaining({ code: 'index-not-file', file: 'index.md' })]);
    await writeIndexes(await loadBundle(kb));
    expect(readFileSync(outside, 'utf8')).toBe('export PATH\n');
  });

  it('leaves a copied real bundle byte for byte the same on --write', async () => {
    const dir = join(temp(), 'ga4');
    cpSync(join(OKF, 'ga4'), dir, { recursive: true });
    expect(await writeIndexes(await loadBundle(dir))).toEqual([]);
    expect(read(dir, 'index.md')).toBe(read(join(OKF, 'ga4'), 'index.md'));
  });
});
