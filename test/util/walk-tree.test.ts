import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_DEPTH, walkTree } from '../../src/util/walk-tree.js';
import { tempProject } from '../helpers/project.js';

function tree(root: string, files: readonly string[]): void {
  for (const file of files) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), file);
  }
}

describe('walkTree', () => {
  it('walks depth first in text order, each folder before its contents, skipping hidden, node_modules and dist', () => {
    using project = tempProject();
    tree(project.dir, [
      'b.md',
      'a/z.md',
      'a/B.md',
      '.git/config',
      'node_modules/x/y.js',
      'dist/out.js',
      '.env',
    ]);
    const seen = [...walkTree(project.dir)].map((e) => `${e.kind} ${e.rel} ${e.depth}`);
    expect(seen).toEqual(['file .env 1', 'dir a 1', 'file a/B.md 2', 'file a/z.md 2', 'file b.md 1']);
  });

  it('takes a skip list of its own', () => {
    using project = tempProject();
    tree(project.dir, ['dist/out.js', 'keep/x.md', 'drop/y.md']);
    const rels = [...walkTree(project.dir, { skipDir: (name) => name === 'drop' })].map((e) => e.rel);
    expect(rels).toEqual(['dist', 'dist/out.js', 'keep', 'keep/x.md']);
  });

  it('does not enter a folder deeper than maxDepth, and says which', () => {
    using project = tempProject();
    tree(project.dir, ['1/2/3/deep.md', '1/shallow.md']);
    const tooDeep: string[] = [];
    const rels = [...walkTree(project.dir, { maxDepth: 2, onTooDeep: (p) => tooDeep.push(p) })].map(
      (e) => e.rel,
    );
    expect(rels).toEqual(['1', '1/2', '1/shallow.md']);
    expect(tooDeep).toEqual([join(project.dir, '1', '2', '3')]);
    expect(DEFAULT_MAX_DEPTH).toBeGreaterThanOrEqual(16);
  });

  it('yields a symlink as a link and never follows it: a link back to the root cannot loop', () => {
    using project = tempProject();
    tree(project.dir, ['a/x.md']);
    symlinkSync(project.dir, join(project.dir, 'a', 'loop'));
    symlinkSync(join(project.dir, 'a', 'x.md'), join(project.dir, 'y.md'));
    const seen = [...walkTree(project.dir)].map((e) => `${e.kind} ${e.rel}`);
    expect(seen).toEqual(['dir a', 'link a/loop', 'file a/x.md', 'link y.md']);
  });

  it('throws when the root cannot be read, and passes a folder below it that cannot be read to onUnreadable', () => {
    using project = tempProject();
    expect(() => [...walkTree(join(project.dir, 'missing'))]).toThrow(/ENOENT/);
    if (process.getuid?.() === 0) return; // root reads any folder
    tree(project.dir, ['locked/x.md', 'open/y.md']);
    chmodSync(join(project.dir, 'locked'), 0o000);
    try {
      const unreadable: string[] = [];
      const rels = [...walkTree(project.dir, { onUnreadable: (p) => unreadable.push(p) })].map((e) => e.rel);
      expect(rels).toEqual(['open', 'open/y.md']);
      expect(unreadable).toEqual([join(project.dir, 'locked')]);
    } finally {
      chmodSync(join(project.dir, 'locked'), 0o755);
    }
  });
});
