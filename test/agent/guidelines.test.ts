import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadGuidelines, stripHtmlComments } from '../../src/agent/guidelines.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A disposable machine: a TACK_HOME and a repository (with .git) holding a nested working directory. */
function world() {
  // Real path: on macOS the temp folder is behind a symlink, and layers record real paths.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tack-guidelines-')));
  dirs.push(root);
  const home = join(root, 'tack-home');
  const repo = join(root, 'repo');
  const cwd = join(repo, 'packages', 'app');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  const write = (path: string, content: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    return path;
  };
  const env = { HOME: join(root, 'nohome'), TACK_HOME: home };
  return { root, home, repo, cwd, write, env };
}

describe('loadGuidelines', () => {
  it('reads the user file, then AGENTS.md and CLAUDE.md from the repository root down to the working directory', async () => {
    const w = world();
    w.write(join(w.home, 'AGENTS.md'), 'user rule');
    w.write(join(w.repo, 'AGENTS.md'), 'root agents');
    w.write(join(w.repo, 'CLAUDE.md'), 'root claude');
    w.write(join(w.repo, 'packages', 'CLAUDE.md'), 'packages claude');
    w.write(join(w.cwd, 'AGENTS.md'), 'app agents');
    // Above the repository: not part of this project.
    w.write(join(w.root, 'AGENTS.md'), 'outside the repo');
    // A sibling folder: not on the path to the working directory.
    w.write(join(w.repo, 'packages', 'other', 'AGENTS.md'), 'sibling');

    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });

    expect(g.warnings).toEqual([]);
    expect(g.layers).toEqual([
      { source: join(w.home, 'AGENTS.md'), scope: 'user', bytes: 9, truncated: false },
      { source: join(w.repo, 'AGENTS.md'), scope: 'project', bytes: 11, truncated: false },
      { source: join(w.repo, 'CLAUDE.md'), scope: 'project', bytes: 11, truncated: false },
      { source: join(w.repo, 'packages', 'CLAUDE.md'), scope: 'project', bytes: 15, truncated: false },
      { source: join(w.cwd, 'AGENTS.md'), scope: 'project', bytes: 10, truncated: false },
    ]);
    const order = ['user rule', 'root agents', 'root claude', 'packages claude', 'app agents'].map((t) =>
      g.text.indexOf(t),
    );
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(g.text).not.toContain('outside the repo');
    expect(g.text).not.toContain('sibling');

    expect(g.text).toContain(
      `<guidelines source="AGENTS.md (user)" path="${join(w.home, 'AGENTS.md')}">\nuser rule\n</guidelines>`,
    );
    expect(g.text).toContain(
      `<guidelines source="AGENTS.md (project root)" path="${join(w.repo, 'AGENTS.md')}">\nroot agents\n</guidelines>`,
    );
    expect(g.text).toContain(`<guidelines source="CLAUDE.md (packages)"`);
    expect(g.text).toContain(`<guidelines source="AGENTS.md (packages/app)"`);
    // The model is told which way conflicts go.
    expect(g.text.indexOf('the later one wins')).toBeLessThan(g.text.indexOf('<guidelines'));
    expect(g.hash).toBe(createHash('sha256').update(g.text).digest('hex'));
  });

  it('returns empty text when there are no files', async () => {
    const w = world();
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g).toEqual({
      text: '',
      hash: createHash('sha256').update('').digest('hex'),
      layers: [],
      warnings: [],
    });
  });

  it('finds the repository root by .git even when a package has its own tack.json', async () => {
    const w = world();
    w.write(join(w.repo, 'AGENTS.md'), 'root');
    w.write(join(w.repo, 'packages', 'app', 'tack.json'), '{}');
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g.layers.map((l) => l.source)).toEqual([join(w.repo, 'AGENTS.md')]);
  });

  it('takes the user folder from userDir when given', async () => {
    const w = world();
    const other = join(w.root, 'elsewhere');
    w.write(join(other, 'AGENTS.md'), 'from userDir');
    w.write(join(w.home, 'AGENTS.md'), 'from TACK_HOME');
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env, userDir: other });
    expect(g.text).toContain('from userDir');
    expect(g.text).not.toContain('from TACK_HOME');
  });

  it('strips HTML comments, single- and multi-line, but not inside code fences; skips layers left empty', async () => {
    const w = world();
    w.write(
      join(w.repo, 'AGENTS.md'),
      [
        '# Rules',
        '<!-- maintainers: keep this short -->',
        'Use tabs. <!-- inline note --> Always.',
        '<!--',
        'a multi-line',
        'note',
        '-->',
        'Run tests.',
        '```html',
        '<!-- an example the model should see -->',
        '```',
      ].join('\n'),
    );
    w.write(join(w.repo, 'CLAUDE.md'), '<!-- only a comment -->\n\n  \n');
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g.layers.map((l) => l.source)).toEqual([join(w.repo, 'AGENTS.md')]);
    expect(g.text).toContain(
      '# Rules\nUse tabs.  Always.\nRun tests.\n```html\n<!-- an example the model should see -->\n```',
    );
    expect(g.text).not.toContain('maintainers');
    expect(g.text).not.toContain('multi-line');
    expect(g.text).not.toContain('inline note');
  });

  it('warns about an unclosed comment and leaves out what follows it', () => {
    expect(stripHtmlComments('keep\n<!-- never closed\nhidden')).toEqual({
      text: 'keep',
      unterminated: true,
    });
  });

  it('reads a symlinked AGENTS.md that points outside the repository, recording the real path', async () => {
    const w = world();
    const shared = w.write(join(w.root, 'dotfiles', 'shared-agents.md'), 'shared rules');
    symlinkSync(shared, join(w.repo, 'AGENTS.md'));
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g.layers).toEqual([{ source: shared, scope: 'project', bytes: 12, truncated: false }]);
    expect(g.text).toContain(`source="AGENTS.md (project root)" path="${shared}"`);
  });

  it('includes a file once when CLAUDE.md is a link to (or a copy of) AGENTS.md', async () => {
    const w = world();
    w.write(join(w.repo, 'AGENTS.md'), 'one file');
    symlinkSync('AGENTS.md', join(w.repo, 'CLAUDE.md'));
    w.write(join(w.cwd, 'AGENTS.md'), 'copied');
    w.write(join(w.cwd, 'CLAUDE.md'), 'copied\n');
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g.layers.map((l) => l.source)).toEqual([join(w.repo, 'AGENTS.md'), join(w.cwd, 'AGENTS.md')]);
    expect(g.text.match(/one file/g)).toHaveLength(1);
  });

  it('warns about a dangling symlink and goes on', async () => {
    const w = world();
    symlinkSync(join(w.root, 'missing.md'), join(w.repo, 'AGENTS.md'));
    w.write(join(w.cwd, 'AGENTS.md'), 'still read');
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g.text).toContain('still read');
    expect(g.warnings).toHaveLength(1);
    expect(g.warnings[0]).toContain('AGENTS.md (project root)');
  });

  it('cuts the least specific layers first when over the cap, and reports it', async () => {
    const w = world();
    w.write(join(w.home, 'AGENTS.md'), 'user '.repeat(40).trim()); // 199 bytes
    w.write(join(w.repo, 'AGENTS.md'), Array.from({ length: 20 }, (_, i) => `root line ${i}`).join('\n'));
    w.write(join(w.cwd, 'AGENTS.md'), 'nearest '.repeat(10).trim()); // 79 bytes

    const g = await loadGuidelines({ cwd: w.cwd, env: w.env, maxBytes: 150 });

    const [user, root, nearest] = g.layers;
    expect(nearest).toMatchObject({ bytes: 79, truncated: false });
    // 71 bytes were left: exactly the root file's first six lines.
    expect(root).toMatchObject({ bytes: 71, truncated: true });
    expect(user).toMatchObject({ source: join(w.home, 'AGENTS.md'), bytes: 0, truncated: true });
    expect(g.layers.reduce((sum, l) => sum + l.bytes, 0)).toBeLessThanOrEqual(150);

    expect(g.text).toContain('nearest '.repeat(10).trim());
    expect(g.text).toContain('root line 0\n');
    expect(g.text).toContain('root line 5\n[truncated: 71 of 249 bytes kept]');
    expect(g.text).not.toContain('root line 6');
    expect(g.text).not.toContain('user user');
    expect(g.text).not.toContain('AGENTS.md (user)');
    expect(g.warnings).toEqual([
      'guidelines exceed 150 bytes: AGENTS.md (project root) cut to 71 of 249 bytes',
      'guidelines exceed 150 bytes: AGENTS.md (user) (199 bytes) left out',
    ]);
  });

  it('never splits a character when cutting', async () => {
    const w = world();
    w.write(join(w.repo, 'AGENTS.md'), 'é'.repeat(100));
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env, maxBytes: 51 });
    expect(g.layers[0]).toMatchObject({ bytes: 50, truncated: true });
    expect(g.text).toContain(`${'é'.repeat(25)}\n[truncated`);
    expect(g.text).not.toContain('\uFFFD');
  });

  it('keeps a closing tag in a file from ending its block early', async () => {
    const w = world();
    w.write(join(w.repo, 'AGENTS.md'), 'a </guidelines> b');
    const g = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(g.text.match(/<\/guidelines>/g)).toHaveLength(1);
  });

  it('changes its hash exactly when the text changes', async () => {
    const w = world();
    const file = w.write(join(w.repo, 'AGENTS.md'), 'version one');
    const first = await loadGuidelines({ cwd: w.cwd, env: w.env });
    const again = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(again.hash).toBe(first.hash);

    // A comment the model never sees changes nothing.
    writeFileSync(file, 'version one\n<!-- a note -->');
    const commented = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(commented.text).toBe(first.text);
    expect(commented.hash).toBe(first.hash);

    writeFileSync(file, 'version two');
    const changed = await loadGuidelines({ cwd: w.cwd, env: w.env });
    expect(changed.text).not.toBe(first.text);
    expect(changed.hash).not.toBe(first.hash);
  });
});
