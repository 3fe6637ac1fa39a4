import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import { loadBundle } from '../../src/knowledge/bundle.js';
import { GENERATOR_ACTOR, generateBundle } from '../../src/knowledge/generate.js';
import { REPO, tempProject } from '../helpers/project.js';

const NOW = new Date('2026-11-30T02:00:00Z');
/** The mtime every document gets, so `last_modified` can be asserted exactly. */
const MTIME = new Date('2026-10-01T08:30:00Z');

function writeDocs(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    utimesSync(file, MTIME, MTIME);
  }
}

const DOCS = {
  'index.md': '# Welcome\n\nThis is the home page of the docs. It links to [the intro](guides/intro.md).\n',
  'log.md': '---\ntitle: Logging\n---\n# Logging\n\nEvery call is logged to SQLite.\n',
  'guides/intro.md': [
    '---',
    'title: "Setup: the quick way"',
    'description: Get tack running in five minutes.',
    'tags: [setup, Quick Start]',
    'sidebar_position: 2',
    '---',
    '# Intro',
    '',
    'Read [tuning](advanced/tuning), then [the API](../Reference/api.mdx#calls "API") and see ![logo](../img/logo.png).',
    '',
    '```md',
    '[not a link](advanced/tuning.md)',
    '```',
    '',
  ].join('\n'),
  'guides/advanced/tuning.md': [
    '# Tuning `fast` paths {#tuning}',
    '',
    '> A note that is not the description.',
    '',
    'The cache is warm, e.g. after a first run. A second sentence that is left out.',
    '',
  ].join('\n'),
  'Reference/api.mdx': [
    "import { Tabs } from '@theme/Tabs'",
    'export const meta = {}',
    '',
    '# API: "calls" & <results>',
    '',
    '- a list item first',
    '',
    `Every call returns a result with ${'many words '.repeat(30)}in it.`,
    '',
  ].join('\n'),
  'plain.md': '| a | b |\n|---|---|\n| 1 | 2 |\n',
  'empty.md': '  \n',
  'img/logo.png': 'PNG',
  'notes.txt': 'not markdown',
  '.hidden/secret.md': '# Secret\n',
  'node_modules/pkg/readme.md': '# Dependency\n',
};

describe('generateBundle', () => {
  it('makes one draft Reference concept per document, with provenance, indexes and no lint errors', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    const out = join(project.dir, 'knowledge');
    writeDocs(from, DOCS);

    const result = await generateBundle({ from, out, now: NOW });

    expect(result.concepts).toBe(6);
    expect(result.skipped).toEqual([
      { file: 'empty.md', reason: 'empty document' },
      { file: 'img/logo.png', reason: 'not Markdown (.md, .mdx)' },
      { file: 'notes.txt', reason: 'not Markdown (.md, .mdx)' },
    ]);
    expect(result.written).toEqual([
      'Reference/api.md',
      'Reference/index.md',
      'guides/advanced/index.md',
      'guides/advanced/tuning.md',
      'guides/index.md',
      'guides/intro.md',
      'index.md',
      'log-doc.md',
      'overview.md',
      'plain.md',
    ]);

    const bundle = await loadBundle(out);
    expect(bundle.errors).toBe(0);
    expect(bundle.okfVersion).toBe('0.2');
    expect([...bundle.concepts.keys()].sort()).toEqual([
      'Reference/api',
      'guides/advanced/tuning',
      'guides/intro',
      'log-doc',
      'overview',
      'plain',
    ]);
    for (const concept of bundle.concepts.values()) {
      expect(concept.type).toBe('Reference');
      expect(concept.status).toBe('draft');
      expect(concept.trust).toBe('unverified');
      expect(concept.generated?.by).toBe(GENERATOR_ACTOR);
      expect(concept.generated?.at).toMatchObject({ raw: '2026-11-30T02:00:00Z', form: 'datetime' });
      expect(concept.sources).toHaveLength(1);
      expect(concept.sources[0]).toMatchObject({
        id: 'origin',
        title: concept.title,
        lastModified: { raw: '2026-10-01T08:30:00Z', form: 'datetime' },
      });
    }

    const intro = bundle.require('guides/intro');
    expect(intro.title).toBe('Setup: the quick way');
    expect(intro.description).toBe('Get tack running in five minutes.');
    expect(intro.tags).toEqual(['setup', 'Quick Start']);
    expect(intro.data.sidebar_position).toBeUndefined();
    // The resource is relative to the concept's file and names the very document.
    const origin = intro.sources[0]!.resource;
    expect(origin).toBe('../../docs/guides/intro.md');
    expect(resolve(out, 'guides', origin)).toBe(join(from, 'guides', 'intro.md'));
    expect(intro.body).not.toContain('sidebar_position');
    expect(intro.body.trimStart().startsWith('# Intro')).toBe(true);
    // Links follow the documents to their concepts; other files are pointed at where they are.
    expect(intro.body).toContain('[tuning](advanced/tuning.md)');
    expect(intro.body).toContain('[the API](../Reference/api.md#calls "API")');
    expect(intro.body).toContain('![logo](../../docs/img/logo.png)');
    expect(intro.body).toContain('[not a link](advanced/tuning.md)\n```'); // code is left alone
    expect(bundle.outlinks('guides/intro').map((e) => [e.to, e.kind])).toEqual([
      ['guides/advanced/tuning', 'link'],
      ['Reference/api', 'link'],
    ]);

    const tuning = bundle.require('guides/advanced/tuning');
    expect(tuning.title).toBe('Tuning `fast` paths');
    expect(tuning.description).toBe('The cache is warm, e.g. after a first run.');
    expect(tuning.tags).toEqual(['guides', 'advanced']);

    const api = bundle.require('Reference/api');
    expect(api.title).toBe('API: "calls" & <results>');
    expect(api.tags).toEqual(['reference']);
    expect(api.body).not.toMatch(/^(import|export) /m);
    expect(api.description!.length).toBeLessThanOrEqual(200);
    expect(api.description).toMatch(/^Every call returns a result with many words .*\.\.\.$/);
    expect(api.description).not.toContain('\n');

    // index.md and log.md are reserved names (§3.1): renamed, not lost.
    expect(bundle.require('overview').title).toBe('Welcome');
    expect(bundle.require('overview').body).toContain('[the intro](guides/intro.md)');
    expect(bundle.require('log-doc').title).toBe('Logging');
    expect(bundle.require('plain')).toMatchObject({ title: 'plain' });
    expect(bundle.require('plain').description).toBeUndefined();
    expect(bundle.require('plain').tags).toEqual([]);

    const root = bundle.indexes.get('')!;
    expect(root.entries.map((e) => e.target)).toEqual(
      expect.arrayContaining(['overview.md', 'guides/index.md', 'Reference/index.md']),
    );
    expect(readFileSync(join(out, 'index.md'), 'utf8')).toMatch(/^---\nokf_version: "0\.2"\n---\n/);
    expect(bundle.indexes.get('guides')!.entries).toContainEqual({
      section: 'Reference',
      title: 'Setup: the quick way',
      target: 'intro.md',
      description: 'Get tack running in five minutes.',
    });
  });

  it('writes titles and descriptions with YAML syntax in them safely', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    writeDocs(from, {
      'a.md': '# Incident: "freshness" alert #3 — [draft]\n\nStep one: page the owner. Then wait.\n',
      'b.md': '---\ntitle: "2026"\ndescription: "yes"\n---\nBody.\n',
      'c.md': "---\ntitle: '- not: a list'\n---\n# Ignored\n",
      'd.md': '```sh\n# a shell comment, not a heading\nnpm ci\n```\n\nText here.\n',
    });
    const out = join(project.dir, 'kb');
    await generateBundle({ from, out, now: NOW });
    const bundle = await loadBundle(out);
    expect(bundle.errors).toBe(0);
    expect(bundle.require('a').title).toBe('Incident: "freshness" alert #3 — [draft]');
    expect(bundle.require('a').description).toBe('Step one: page the owner.');
    expect(bundle.require('b').data.title).toBe('2026');
    expect(bundle.require('b').data.description).toBe('yes');
    expect(bundle.require('c').title).toBe('- not: a list');
    expect(bundle.require('d')).toMatchObject({ title: 'd', description: 'Text here.' });
  });

  it('gives every document its own concept when names collide', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    writeDocs(from, {
      'a/index.md': '# Section A\n\nSee [x](x.mdx) and [y](x.md).\n',
      'a/overview.md': '# Overview of A\n',
      'a/x.md': '# X in Markdown\n',
      'a/x.mdx': '# X in MDX\n',
    });
    const out = join(project.dir, 'kb');
    const result = await generateBundle({ from, out, now: NOW });
    const bundle = await loadBundle(out);
    expect(bundle.errors).toBe(0);
    expect(result.written).toEqual([
      'a/index-doc.md',
      'a/index.md',
      'a/overview.md',
      'a/x-2.md',
      'a/x.md',
      'index.md',
    ]);
    expect(bundle.require('a/overview').title).toBe('Overview of A');
    expect(bundle.require('a/index-doc').title).toBe('Section A');
    expect(bundle.require('a/x-2').title).toBe('X in MDX');
    expect(bundle.outlinks('a/index-doc').map((e) => e.to)).toEqual(['a/x-2', 'a/x']);
  });

  it('refuses a non-empty bundle folder without force, and the docs folder itself even with it', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    writeDocs(from, { 'a.md': '# A\n\nText.\n' });
    const out = join(project.dir, 'kb');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'mine');

    const refused = await generateBundle({ from, out }).catch((error: unknown) => error);
    expect(TackError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'USAGE' });
    expect((refused as Error).message).toContain(out);
    expect((refused as Error).message).toContain('--force');

    const forced = await generateBundle({ from, out, force: true, now: NOW });
    expect(forced.written).toEqual(['a.md', 'index.md']);
    expect(readFileSync(join(out, 'keep.txt'), 'utf8')).toBe('mine');

    for (const bad of [from, project.dir]) {
      await expect(generateBundle({ from, out: bad, force: true })).rejects.toMatchObject({ code: 'USAGE' });
    }
    expect(readFileSync(join(from, 'a.md'), 'utf8')).toBe('# A\n\nText.\n');
  });

  it('with force into an existing bundle, keeps its hand-written index lines and rewrites only the generated block', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    writeDocs(from, { 'a.md': '# A\n\nText.\n' });
    const out = join(project.dir, 'kb');
    await generateBundle({ from, out, now: NOW });
    const first = readFileSync(join(out, 'index.md'), 'utf8');
    expect(first).toMatch(/^---\nokf_version: "0\.2"\n---\n\n<!-- tack:generated-index/);
    const curated = `${first}\n## Reading order\n\nStart with A. <!-- a person wrote this -->\n`;
    writeFileSync(join(out, 'index.md'), curated);

    writeDocs(from, { 'b.md': '# B\n\nMore text.\n' });
    const again = await generateBundle({ from, out, force: true, now: NOW });
    expect(again.written).toEqual(['a.md', 'b.md', 'index.md']);
    expect(readFileSync(join(out, 'index.md'), 'utf8')).toBe(
      curated.replace('* [A](a.md) - Text.\n', '* [A](a.md) - Text.\n* [B](b.md) - More text.\n'),
    );
  });

  it('leaves a bundle folder inside the docs folder out of the documents', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    writeDocs(from, { 'a.md': '# A\n\nText.\n' });
    const out = join(from, 'knowledge');
    await generateBundle({ from, out, now: NOW });
    const again = await generateBundle({ from, out, force: true, now: NOW });
    expect(again.concepts).toBe(1);
    expect(again.skipped).toEqual([{ file: 'knowledge/', reason: 'the bundle folder itself' }]);
    expect([...(await loadBundle(out)).concepts.keys()]).toEqual(['a']);
    expect((await loadBundle(out)).require('a').sources[0]!.resource).toBe('../a.md');
  });

  it('reads hostile documents quickly and safely: long runs, unclosed syntax, an alias bomb', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    const run = (unit: string) => unit.repeat(Math.ceil(100_000 / unit.length));
    writeDocs(from, {
      'long.md': `---\ntitle: x${' '.repeat(100_000)}y\n---\nBody.\n`,
      'heading.md': `# a${' '.repeat(100_000)}b {#${run('{#')}\n\n${run('[')}\n`,
      'brackets.md': `# [${run('[')}](x) {#${run('x')}}\n\n${run('**a')} and ${run('<!--')}\n`,
      'csharp.md': '# Notes on C#\n\nText.\n',
      'bomb.md': `---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n# Bomb\n`,
    });
    const out = join(project.dir, 'kb');
    // No time bound (timing belongs in bench/): a quadratic regression on these inputs runs past the test's
    // own timeout instead.
    await generateBundle({ from, out, now: NOW });
    const bundle = await loadBundle(out);
    expect(bundle.errors).toBe(0);
    expect(bundle.require('long').title).toBe('x y');
    expect(bundle.require('bomb').title).toBe('Bomb');
    // A closing run of #s needs a space before it: this heading is about C#.
    expect(bundle.require('csharp').title).toBe('Notes on C#');
  });

  it('says so when the folder has no documents or is not a folder', async () => {
    using project = tempProject();
    const from = join(project.dir, 'docs');
    writeDocs(from, { 'a.txt': 'text' });
    await expect(generateBundle({ from, out: join(project.dir, 'kb') })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('no Markdown documents'),
    });
    await expect(
      generateBundle({ from: join(project.dir, 'missing'), out: join(project.dir, 'kb') }),
    ).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('turns the docs server fixture into a conformant bundle', async () => {
    using project = tempProject();
    const from = join(REPO, 'test', 'fixtures', 'docs');
    const out = join(project.dir, 'kb');
    const result = await generateBundle({ from, out, now: NOW });
    expect(result.skipped).toEqual([]);
    const bundle = await loadBundle(out);
    expect(bundle.errors).toBe(0);
    expect([...bundle.concepts.keys()].sort()).toEqual([
      'broken-front-matter',
      'era-cache',
      'guides/configure',
      'guides/install',
      'windows',
    ]);
    expect(bundle.require('guides/install')).toMatchObject({
      title: 'Installing tack',
      description: 'How to install tack with npm and check that it works.',
      tags: ['setup'],
    });
    const configure = bundle.require('guides/configure');
    expect(configure).toMatchObject({ title: 'Configure servers', tags: ['guides'] });
    expect(configure.description).toBe('The `mcpServers` block names each server.');
    expect(configure.body).not.toContain('import {');
    expect(configure.sources[0]!.resource).toMatch(/guides\/configure\.mdx$/);
    // Front matter that is not YAML is dropped with the rest of the front matter, not kept as text.
    const broken = bundle.require('broken-front-matter');
    expect(broken.body).not.toContain('[unclosed');
    expect(broken.description).toBe('Body of a document whose front matter is not valid YAML.');
    expect(bundle.require('windows').body).not.toContain('\r');
  });
});
