import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client, type PriorDiscovery } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { StdioServerConfig } from '../src/config/load.js';
import { McpHost } from '../src/mcp/host.js';
import { openDatabase } from '../src/store/database.js';
import { type EraCache, SqliteEraCache } from '../src/store/era-cache.js';
import {
  childCpuMeter,
  fixtures,
  isMain,
  log,
  median,
  PidFile,
  repoRoot,
  round,
  sleep,
  stdioServer,
  summarize,
  tempDir,
  waitForExit,
} from './util.js';

export interface ConnectOptions {
  /** Measured repetitions per variant (default 7). */
  reps?: number;
  /** Unmeasured repetitions first (default 1); they also fill the era cache. */
  warmups?: number;
  /** Servers in the parallel case (default 10). */
  parallel?: number;
}

/** Pause after every teardown (children already exited) so the next sample starts on an idle machine. */
const SETTLE_MS = 150;

/** One timed connect: how long, how many processes it spawned, and what it ended up with. */
interface Sample {
  ms: number;
  spawned: number;
  /** How long after close() resolved the spawned processes were still alive. */
  exitWaitMs: number;
  killed: number;
  connected: number;
  /** CPU time, until connected, of the bench process and of the server processes the connect spawned. */
  hostCpuMs: number;
  serversCpuMs: number | undefined;
  era: string;
  eraSource?: string;
  errors: string[];
}

interface Variant {
  id: string;
  run(): Promise<Sample>;
}

/** Runs every variant `warmups + reps` times, rotating the order each repetition to spread drift evenly. */
async function measure(variants: readonly Variant[], reps: number, warmups: number, label: string) {
  const samples = new Map<string, Sample[]>(variants.map((v) => [v.id, []]));
  for (let rep = -warmups; rep < reps; rep++) {
    const shift = rep < 0 ? 0 : rep % variants.length;
    const order = [...variants.slice(shift), ...variants.slice(0, shift)];
    for (const variant of order) {
      const sample = await variant.run();
      if (sample.errors.length) log(`${label} ${variant.id}: ${sample.errors.join('; ')}`);
      if (rep >= 0) samples.get(variant.id)!.push(sample);
    }
    log(`${label}: ${rep < 0 ? 'warm-up' : `rep ${rep + 1}/${reps}`} done`);
  }
  return samples;
}

function report(samples: readonly Sample[]) {
  const tally = (values: string[]) =>
    Object.fromEntries([...new Set(values)].map((v) => [v, values.filter((x) => x === v).length]));
  return {
    ...summarize(samples.map((s) => s.ms)),
    processesPerConnect: median(samples.map((s) => s.spawned)),
    processesSeen: [...new Set(samples.map((s) => s.spawned))].sort((a, b) => a - b),
    connected: median(samples.map((s) => s.connected)),
    hostCpuMedianMs: round(median(samples.map((s) => s.hostCpuMs))),
    serversCpuMedianMs: samples.every((s) => s.serversCpuMs !== undefined)
      ? round(median(samples.map((s) => s.serversCpuMs!)))
      : undefined,
    era: tally(samples.map((s) => s.era)),
    ...(samples.some((s) => s.eraSource !== undefined)
      ? { eraSource: tally(samples.map((s) => s.eraSource ?? 'none')) }
      : {}),
    exitAfterCloseMedianMs: round(median(samples.map((s) => s.exitWaitMs))),
    killedAfterClose: samples.reduce((n, s) => n + s.killed, 0),
    errors: samples.flatMap((s) => s.errors).slice(0, 5),
  };
}

/** What one connect cost until connected: wall time, CPU, and the processes it spawned (pids). */
interface Connected {
  ms: number;
  hostCpuMs: number;
  serversCpuMs: number | undefined;
  spawned: number[];
}

/**
 * Starts timing a connect (wall time, this process's CPU, the server processes' CPU), the pid file marked so
 * that `connected()` sees only the processes spawned since.
 */
function startMeter(pids: PidFile): { connected(): Connected } {
  pids.takeNew();
  const serversCpu = childCpuMeter();
  const cpu = process.cpuUsage();
  const started = performance.now();
  return {
    connected() {
      const ms = performance.now() - started;
      const hostCpu = process.cpuUsage(cpu);
      const spawned = pids.takeNew();
      return {
        ms,
        hostCpuMs: (hostCpu.user + hostCpu.system) / 1000,
        serversCpuMs: serversCpu(spawned),
        spawned,
      };
    },
  };
}

/** After close(): waits for the spawned processes to exit, then lets the machine settle. */
async function reap(spawned: readonly number[]): Promise<Pick<Sample, 'spawned' | 'exitWaitMs' | 'killed'>> {
  const exit = await waitForExit(spawned);
  await sleep(SETTLE_MS);
  return { spawned: spawned.length, exitWaitMs: exit.waitedMs, killed: exit.killed };
}

/** `McpHost.start` (every server connected and its listings loaded) timed, then closed and reaped. */
async function timeHost(
  servers: StdioServerConfig[],
  eraCache: EraCache | false,
  pids: PidFile,
): Promise<Sample> {
  const meter = startMeter(pids);
  const host = await McpHost.start({ config: { servers }, eraCache, logDir: false });
  const { ms, hostCpuMs, serversCpuMs, spawned } = meter.connected();
  const statuses = host.servers();
  await host.close();
  return {
    ms,
    ...(await reap(spawned)),
    hostCpuMs,
    serversCpuMs,
    connected: statuses.filter((s) => s.status === 'connected').length,
    era: [...new Set(statuses.map((s) => s.era ?? 'none'))].join('+'),
    eraSource: [...new Set(statuses.map((s) => s.eraSource ?? 'none'))].join('+'),
    errors: statuses.flatMap((s) => (s.error ? [`${s.name}: ${s.error.message}`] : [])),
  };
}

/** The bare SDK: connect (auto negotiation, or a supplied prior verdict) and list tools. */
async function timeSdk(
  script: string,
  pids: PidFile,
  prior: PriorDiscovery | undefined,
  onConnected?: (client: Client) => void,
): Promise<Sample> {
  const errors: string[] = [];
  const meter = startMeter(pids);
  const client = new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [script, '--pid-file', pids.file],
    cwd: repoRoot,
  });
  let measured: Connected | undefined;
  let era = 'none';
  try {
    await client.connect(transport, prior ? { prior } : undefined);
    await client.listTools();
    measured = meter.connected();
    era = client.getProtocolEra() ?? 'none';
    onConnected?.(client);
  } catch (error) {
    errors.push(error instanceof Error ? error.message : String(error));
  }
  await client.close().catch(() => {});
  const spawned = [...(measured?.spawned ?? []), ...pids.takeNew()];
  return {
    ms: measured?.ms ?? Number.NaN,
    ...(await reap(spawned)),
    hostCpuMs: measured?.hostCpuMs ?? Number.NaN,
    serversCpuMs: measured?.serversCpuMs,
    connected: errors.length ? 0 : 1,
    era,
    errors,
  };
}

async function parallelConnect(cache: EraCache, dir: string, n: number, reps: number, warmups: number) {
  const pids = new PidFile(join(dir, 'parallel.pids'));
  const servers = (count: number) =>
    Array.from({ length: count }, (_, i) =>
      stdioServer(`s${i + 1}`, fixtures.dual, ['--pid-file', pids.file]),
    );
  const one = servers(1);
  const many = servers(n);
  const variants: Variant[] = [
    { id: 'warm-1', run: () => timeHost(one, cache, pids) },
    { id: `warm-${n}`, run: () => timeHost(many, cache, pids) },
    { id: 'nocache-1', run: () => timeHost(one, false, pids) },
    { id: `nocache-${n}`, run: () => timeHost(many, false, pids) },
  ];
  const samples = await measure(variants, reps, warmups, 'connect/parallel');
  const cores = cpus().length;
  const scenario = (oneId: string, manyId: string) => {
    const single = report(samples.get(oneId)!);
    const parallel = report(samples.get(manyId)!);
    const ratio = round(parallel.medianMs / single.medianMs, 2);
    // The CPU the n servers and the host burn until connected, spread perfectly over the cores: the wall
    // time no scheduler could beat on this machine.
    const cpuFloorMs =
      parallel.serversCpuMedianMs === undefined
        ? undefined
        : round((parallel.serversCpuMedianMs + parallel.hostCpuMedianMs) / cores);
    return {
      one: single,
      many: parallel,
      ratio,
      /** Serial estimate (n x one server) over the parallel time: what starting them together saves. */
      speedupVsSerial: round((n * single.medianMs) / parallel.medianMs, 2),
      cpuFloorMs,
      /** The ratio this machine could reach at best, given that CPU floor. */
      ratioFloor: cpuFloorMs === undefined ? undefined : round(cpuFloorMs / single.medianMs, 2),
    };
  };
  const warmCache = scenario('warm-1', `warm-${n}`);
  return {
    description: `McpHost.start with ${n} copies of the dual-era stdio fixture (s1..s${n}) vs 1, median of ${reps} after ${warmups} warm-up`,
    servers: n,
    cores,
    warmCache,
    noCache: scenario('nocache-1', `nocache-${n}`),
    target: { ratioAtMost: 1.5, metWarm: warmCache.ratio <= 1.5 },
  };
}

async function warmStart(cache: EraCache, dir: string, reps: number, warmups: number) {
  const out: Record<string, unknown> = {};
  for (const fixture of [
    { id: 'dualEra', script: fixtures.dual },
    { id: 'legacyOnly', script: fixtures.legacyWithPid },
  ]) {
    const pids = new PidFile(join(dir, `${fixture.id}.pids`));
    const server = [stdioServer('s1', fixture.script, ['--pid-file', pids.file])];
    let prior: PriorDiscovery | undefined;
    const remember = (client: Client) => {
      const discover = client.getDiscoverResult();
      prior = discover ? { kind: 'modern', discover } : { kind: 'legacy' };
    };
    // In the warm-up this order is kept: tack fills its cache, the SDK auto run supplies the SDK's prior.
    const variants: Variant[] = [
      { id: 'tackWarmCache', run: () => timeHost(server, cache, pids) },
      { id: 'tackNoCache', run: () => timeHost(server, false, pids) },
      { id: 'sdkAuto', run: () => timeSdk(fixture.script, pids, undefined, remember) },
      { id: 'sdkWithPrior', run: () => timeSdk(fixture.script, pids, prior) },
    ];
    const samples = await measure(variants, reps, warmups, `connect/warm-start ${fixture.id}`);
    out[fixture.id] = Object.fromEntries(variants.map((v) => [v.id, report(samples.get(v.id)!)]));
  }
  return {
    description: `one server: connect + listings, median of ${reps} after ${warmups} warm-up; processes counted from the fixture's pid file`,
    ...out,
  };
}

export async function runConnect(options: ConnectOptions = {}) {
  const reps = options.reps ?? 7;
  const warmups = options.warmups ?? 1;
  const tmp = tempDir('connect');
  const db = openDatabase(join(tmp.dir, 'store.db'));
  try {
    const cache = new SqliteEraCache(db);
    const parallel = await parallelConnect(cache, tmp.dir, options.parallel ?? 10, reps, warmups);
    const warm = await warmStart(cache, tmp.dir, reps, warmups);
    return { parallel, warmStart: warm };
  } finally {
    db.close();
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runConnect(), null, 2)}\n`);
}
