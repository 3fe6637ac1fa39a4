import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { runCalls } from './calls.js';
import { runConnect } from './connect.js';
import { runDocs } from './docs.js';
import { runGateway } from './gateway.js';
import { runKnowledge } from './knowledge.js';
import { runLargeResult } from './large-result.js';
import { runPins } from './pins.js';
import { runSandbox } from './sandbox.js';
import { runScan } from './scan.js';
import { runSkills } from './skills.js';
import { runStartup } from './startup.js';
import { runToolSearch } from './tool-search.js';
import { runTui } from './tui.js';
import { log, repoRoot, round } from './util.js';

/**
 * `node dist/bench/run.js [connect] [calls] [large-result] [gateway] [docs] [skills] [knowledge] [tool-search] [pins] [scan] [sandbox] [startup] [tui]`: runs the named benchmarks (all by default) in this one
 * process, prints one JSON document on stdout (progress goes to stderr) and writes it to
 * bench/results/latest.json, keeping the results of benchmarks not run this time.
 */
const BENCHMARKS = {
  connect: () => runConnect(),
  calls: () => runCalls(),
  'large-result': () => runLargeResult(),
  gateway: () => runGateway(),
  docs: () => runDocs(),
  skills: () => runSkills(),
  knowledge: () => runKnowledge(),
  'tool-search': () => runToolSearch(),
  pins: () => runPins(),
  scan: () => runScan(),
  sandbox: () => runSandbox(),
  startup: () => runStartup(),
  tui: () => runTui(),
} as const;
type Name = keyof typeof BENCHMARKS;

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in BENCHMARKS));
if (unknown.length) {
  process.stderr.write(
    `unknown benchmark: ${unknown.join(', ')} (known: ${Object.keys(BENCHMARKS).join(', ')})\n`,
  );
  process.exit(2);
}
const names = (requested.length ? requested : Object.keys(BENCHMARKS)) as Name[];

const version = (pkg: string): string =>
  (JSON.parse(readFileSync(join(repoRoot, pkg, 'package.json'), 'utf8')) as { version: string }).version;

const document: Record<string, unknown> = {
  date: new Date().toISOString(),
  machine: {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    totalMemoryGB: round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${release()} ${process.arch}`,
  },
  versions: {
    tack: version('.'),
    sdkClient: version('node_modules/@modelcontextprotocol/client'),
    sdkServer: version('node_modules/@modelcontextprotocol/server'),
  },
  benchmarks: {},
};

// A partial run updates only the benchmarks it ran; each result carries the date it was measured.
const dir = join(repoRoot, 'bench/results');
const previous = existsSync(join(dir, 'latest.json'))
  ? (JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as { benchmarks?: Record<string, unknown> })
  : {};
const results = { ...previous.benchmarks } as Record<string, unknown>;
document.benchmarks = results;
for (const name of names) {
  log(`${name}: starting`);
  const started = performance.now();
  results[name] = { date: new Date().toISOString(), ...(await BENCHMARKS[name]()) };
  log(`${name}: finished in ${round((performance.now() - started) / 1000)} s`);
}

const text = `${JSON.stringify(document, null, 2)}\n`;
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'latest.tmp.json'), text);
renameSync(join(dir, 'latest.tmp.json'), join(dir, 'latest.json'));
process.stdout.write(text);
