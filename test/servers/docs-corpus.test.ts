import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstWords, indexableText, parseDoc, readDoc } from '../../src/servers/docs/corpus.js';
import { DocsLibrary, type LibraryChange } from '../../src/servers/docs/library.js';
import { REPO, tempProject } from '../helpers/project.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'docs');

describe('reading documents', () => {
  it('takes title and description from front matter, else the first heading and paragraph', () => {
    const withMatter = parseDoc('a', '/a.md', '---\ntitle: "T"\ndescription: D\n---\n# Heading\n\nText.\n');
    expect([withMatter.title, withMatter.description, withMatter.markdown]).toEqual([
      'T',
      'D',
      '# Heading\n\nText.\n',
    ]);
    const bare = parseDoc('dir/b', '/b.md', '# The Heading\n\nFirst paragraph\nwraps.\n\nSecond.\n');
    expect([bare.title, bare.description]).toEqual(['The Heading', 'First paragraph wraps.']);
    const nothing = parseDoc('dir/c', '/c.md', 'just words');
    expect(nothing.title).toBe('c');
  });

  it('tolerates a BOM, CRLF and front matter that is not YAML', () => {
    expect(parseDoc('w', '/w.md', '\uFEFF---\r\ntitle: Win\r\n---\r\nBody\r\n')).toMatchObject({
      title: 'Win',
      markdown: 'Body\n',
    });
    const broken = parseDoc('b', '/b.md', '---\ntitle: [unclosed\n---\nBody');
    expect(broken.title).toBe('b');
    expect(broken.markdown).toContain('Body');
  });

  it('takes only a YAML mapping for front matter: a paragraph between two rules stays in the document', () => {
    const ruled = parseDoc('r', '/r.md', '---\nA paragraph.\n---\nMore text.\n');
    expect(ruled.markdown).toBe('---\nA paragraph.\n---\nMore text.\n');
    expect(ruled.text).toContain('A paragraph.');
    const list = parseDoc('l', '/l.md', '---\n- one\n- two\n---\nBody');
    expect(list.markdown).toContain('- one');
    expect(parseDoc('e', '/e.md', '---\n---\nBody').markdown).toBe('Body'); // empty front matter is still one
  });

  it('indexes prose only: no code fences, math blocks or MDX import/export lines', () => {
    const text = indexableText(
      "import X from 'y'\nexport const a = 1\n# Title\n\n```ts\nconst secretCode = 1;\n```\n\n~~~\ntilde\n~~~\n\n$$\nE = mc^2\n$$\n\nWords stay.",
    );
    expect(text).toBe('# Title Words stay.');
  });

  it('cuts a document at a word count and says how much is left', () => {
    expect(firstWords('one two\nthree four five', 3)).toEqual({ text: 'one two\nthree', rest: 2 });
    expect(firstWords('short text', 400)).toEqual({ text: 'short text', rest: 0 });
  });
});

describe('DocsLibrary', () => {
  it('indexes .md and .mdx below the folder, skipping node_modules and hidden folders', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    cpSync(FIXTURE, root, { recursive: true });
    mkdirSync(join(root, 'node_modules', 'pkg'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'pkg', 'readme.md'), '# dependency');
    mkdirSync(join(root, '.hidden'));
    writeFileSync(join(root, '.hidden', 'secret.md'), '# hidden');
    const library = await DocsLibrary.open(root);
    expect(library.list().map((d) => d.slug)).toEqual([
      'broken-front-matter',
      'era-cache',
      'guides/configure',
      'guides/install',
      'windows',
    ]);
    expect(library.get('guides/install')?.title).toBe('Installing tack');
    expect(library.get('guides/configure')?.title).toBe('Configure servers');
  });

  it('ranks with BM25: the document about the query comes first, code is not searched', async () => {
    const library = await DocsLibrary.open(FIXTURE);
    expect(library.search('warm start process', 3)[0]?.slug).toBe('era-cache');
    expect(library.search('slow server startup timeout', 1)).toEqual([
      { slug: 'guides/configure', title: 'Configure servers', score: expect.any(Number) },
    ]);
    const install = library.search('install npm', 5);
    expect(install[0]?.slug).toBe('guides/install');
    for (let i = 1; i < install.length; i++)
      expect(install[i - 1]!.score).toBeGreaterThanOrEqual(install[i]!.score);
    expect(library.search('quantum-flux-capacitor')).toEqual([]); // inside a code fence only
    expect(library.search('install', 1)).toHaveLength(1);
  });

  it('suggests the slugs a mistyped one probably meant', async () => {
    const library = await DocsLibrary.open(FIXTURE);
    expect(library.nearest('install')[0]).toBe('guides/install');
    expect(library.nearest('guides/confgure')[0]).toBe('guides/configure');
  });

  it('re-indexes added, edited and deleted files when watching', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    cpSync(FIXTURE, root, { recursive: true });
    const library = await DocsLibrary.open(root);
    await library.watch();
    const changes: LibraryChange[] = [];
    library.on('change', (change) => changes.push(change));
    try {
      writeFileSync(join(root, 'new-doc.md'), '# Zebra migration\n\nStriped animals.');
      await expect.poll(() => library.search('zebra')[0]?.slug, { timeout: 5000 }).toBe('new-doc');
      writeFileSync(join(root, 'era-cache.md'), '# Renamed\n\nNow about giraffes.');
      await expect.poll(() => library.search('giraffes')[0]?.slug, { timeout: 5000 }).toBe('era-cache');
      expect(library.search('warm start', 10).map((hit) => hit.slug)).not.toContain('era-cache');
      rmSync(join(root, 'windows.md'));
      await expect.poll(() => library.get('windows'), { timeout: 5000 }).toBeUndefined();
      expect(changes.flatMap((c) => c.added)).toEqual(['new-doc']);
      expect(changes.flatMap((c) => c.updated)).toEqual(['era-cache']);
      expect(changes.flatMap((c) => c.removed)).toEqual(['windows']);
    } finally {
      await library.close();
    }
  });

  it('serves x.md over x.mdx, and the other one when one of them is deleted', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    mkdirSync(root);
    writeFileSync(join(root, 'x.mdx'), '# From mdx');
    writeFileSync(join(root, 'x.md'), '# From md');
    const library = await DocsLibrary.open(root);
    await library.watch();
    const changes: LibraryChange[] = [];
    library.on('change', (change) => changes.push(change));
    try {
      expect(library.get('x')?.title).toBe('From md');
      writeFileSync(join(root, 'x.mdx'), '# From mdx, edited'); // not the one served
      rmSync(join(root, 'x.md'));
      await expect.poll(() => library.get('x')?.title, { timeout: 5000 }).toBe('From mdx, edited');
      writeFileSync(join(root, 'x.md'), '# From md again');
      await expect.poll(() => library.get('x')?.title, { timeout: 5000 }).toBe('From md again');
      rmSync(join(root, 'x.mdx'));
      rmSync(join(root, 'x.md'));
      await expect.poll(() => library.get('x'), { timeout: 5000 }).toBeUndefined();
      expect(changes.flatMap((c) => c.removed)).toEqual(['x']);
      expect(changes.flatMap((c) => c.added)).toEqual([]);
    } finally {
      await library.close();
    }
  });

  it('serves no file from outside the folder, even through a link added while watching', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    mkdirSync(root);
    writeFileSync(join(project.dir, 'secret.md'), '# Secret\n\nclassified words');
    writeFileSync(join(root, 'inside.md'), '# Inside');
    const library = await DocsLibrary.open(root);
    await library.watch();
    try {
      symlinkSync(join('..', 'secret.md'), join(root, 'link.md'));
      symlinkSync('inside.md', join(root, 'alias.md')); // a link within the folder is fine
      await expect.poll(() => library.get('alias')?.title, { timeout: 5000 }).toBe('Inside');
      await new Promise((resolve) => setTimeout(resolve, 300)); // any event for link.md is flushed by now
      expect(library.get('link')).toBeUndefined();
      expect(library.search('classified')).toEqual([]);
      await expect(readDoc(root, join(root, 'link.md'))).rejects.toThrow(/outside/);
    } finally {
      await library.close();
    }
  });

  it('refuses a path that is not a folder, saying so', async () => {
    await expect(DocsLibrary.open('/definitely/not/here')).rejects.toMatchObject({
      code: 'USAGE',
      message: '/definitely/not/here: not a folder of documents',
    });
  });
});
