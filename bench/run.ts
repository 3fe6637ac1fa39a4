import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { runCalls } from './calls.js';
import { runCodeMode } from './code-mode.js';
import { runConnect } from './connect.js';
import { runConsole } from './console.js';
import { runDocs } from './docs.js';
import { runGateway } from './gateway.js';
import { runInstallSize } from './install-size.js';
import { runKnowledge } from './knowledge.js';
import { runLargeResult } from './large-result.js';
import { runPins } from './pins.js';
import { runPromptCache } from './prompt-cache.js';
import { runSandbox } from './sandbox.js';
import { runScan } from './scan.js';
import { runSkills } from './skills.js';
import { runStartup } from './startup.js';
import { runTeam } from './team.js';
import { runToolBridge } from './tool-bridge.js';
import { runToolIndex, runToolSearch } from './tool-search.js';
import { runTui } from './tui.js';
import { log, repoRoot, round } from './util.js';

/**
 * `node dist/bench/run.js [connect] [calls] [large-result] [gateway] [docs] [skills] [knowledge] [tool-search] [tool-index] [tool-bridge] [pins] [scan] [sandbox] [startup] [install-size] [console] [code-mode] [tui] [team] [prompt-cache]`: runs the named benchmarks (all by default) in this one
 * process, prints one JSON document on stdout (progress goes to stderr) and writes it to
 * bench/results/latest.json, keeping the results of benchmarks not run this time. `--rounds N` sets the rounds of
 * the benchmarks that run fresh processes per variant (docs, knowledge; 3 by default), to keep a run short on a
 * shared machine.
 */
const roundsAt = process.argv.indexOf('--rounds');
const rounds = roundsAt === -1 ? undefined : Number(process.argv[roundsAt + 1]);
if (rounds !== undefined && !(Number.isInteger(rounds) && rounds >= 1)) {
  process.stderr.write('--rounds takes a whole number of at least 1\n');
  process.exit(2);
}
const BENCHMARKS = {
  connect: () => runConnect(),
  calls: () => runCalls(),
  'large-result': () => runLargeResult(),
  gateway: () => runGateway(),
  docs: () => runDocs(rounds ? { rounds } : {}),
  skills: () => runSkills(),
  knowledge: () => runKnowledge(rounds ? { rounds } : {}),
  'tool-search': () => runToolSearch(),
  'tool-index': () => runToolIndex(),
  'tool-bridge': () => runToolBridge(),
  pins: () => runPins(),
  scan: () => runScan(),
  sandbox: () => runSandbox(),
  startup: () => runStartup(),
  'install-size': () => runInstallSize(),
  'code-mode': () => runCodeMode(),
  console: () => runConsole(),
  tui: () => runTui(),
  team: () => runTeam(),
  'prompt-cache': () => runPromptCache(),
} as const;
type Name = keyof typeof BENCHMARKS;

const requested = process.argv
  .slice(2)
  .filter((_, i, all) => all[i] !== '--rounds' && all[i - 1] !== '--rounds');
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
  // The load average beside every result: on a shared machine it says how far the figures are from a quiet one.
  const date = new Date().toISOString();
  const loadBefore = loadavg().map((x) => round(x));
  const result = await BENCHMARKS[name]();
  results[name] = {
    date,
    loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x)) },
    ...result,
  };
  log(`${name}: finished in ${round((performance.now() - started) / 1000)} s`);
}

const text = `${JSON.stringify(document, null, 2)}\n`;
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'latest.tmp.json'), text);
renameSync(join(dir, 'latest.tmp.json'), join(dir, 'latest.json'));
process.stdout.write(text);
