import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpHost } from '../src/mcp/host.js';
import {
  fixtures,
  isMain,
  log,
  memory,
  PidFile,
  percentile,
  repoRoot,
  round,
  stdioServer,
  tempDir,
  waitForExit,
} from './util.js';

export interface CallsOptions {
  /** Calls per side (default 5000). */
  calls?: number;
  /** Blocks the calls are split into; the side that goes first alternates per block (default 10). */
  blocks?: number;
  /** Unmeasured calls per side before the first block (default 200). */
  warmup?: number;
}

type Call = () => Promise<unknown>;

interface Side {
  latencies: number[];
  wallMs: number;
  errors: number;
}

async function runBlock(call: Call, count: number, side: Side): Promise<void> {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    try {
      await call();
    } catch {
      side.errors++;
    }
    side.latencies.push(performance.now() - t);
  }
  side.wallMs += performance.now() - started;
}

function sideReport(side: Side) {
  const sorted = [...side.latencies].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return {
    calls: sorted.length,
    totalMs: round(side.wallMs),
    callsPerSec: Math.round((sorted.length / side.wallMs) * 1000),
    meanMs: round(mean, 3),
    p50Ms: round(percentile(sorted, 50), 3),
    p99Ms: round(percentile(sorted, 99), 3),
    maxMs: round(sorted.at(-1)!, 3),
    errors: side.errors,
  };
}

async function compare(
  fixture: { id: string; script: string },
  dir: string,
  options: Required<CallsOptions>,
) {
  const pids = new PidFile(join(dir, `${fixture.id}.pids`));
  const args = ['--pid-file', pids.file];
  const before = memory();
  const host = await McpHost.start({
    config: { servers: [stdioServer('s1', fixture.script, args)] },
    eraCache: false,
    logDir: false,
  });
  const afterTackConnect = memory();
  const client = new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: 'auto' } });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fixture.script, ...args],
    cwd: repoRoot,
  });
  await client.connect(transport);
  const sdkEra = client.getProtocolEra() ?? 'none';
  const tackEra = host.servers()[0]?.era;

  const tackCall: Call = () => host.callTool('mcp__s1__echo', { text: 'hi' });
  const sdkCall: Call = () => client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  const sink: Side = { latencies: [], wallMs: 0, errors: 0 };
  await runBlock(tackCall, options.warmup, sink);
  await runBlock(sdkCall, options.warmup, sink);
  const afterWarmup = memory();

  const tack: Side = { latencies: [], wallMs: 0, errors: 0 };
  const sdk: Side = { latencies: [], wallMs: 0, errors: 0 };
  const perBlock = Math.floor(options.calls / options.blocks);
  for (let b = 0; b < options.blocks; b++) {
    const order: Array<[Call, Side]> =
      b % 2 === 0
        ? [
            [tackCall, tack],
            [sdkCall, sdk],
          ]
        : [
            [sdkCall, sdk],
            [tackCall, tack],
          ];
    for (const [call, side] of order) await runBlock(call, perBlock, side);
  }
  const afterCalls = memory();
  log(`calls ${fixture.id}: done (${tack.latencies.length} + ${sdk.latencies.length} calls)`);

  await host.close();
  await client.close();
  await waitForExit(pids.takeNew());

  const t = sideReport(tack);
  const s = sideReport(sdk);
  const ratio = round(t.totalMs / s.totalMs, 3);
  return {
    eras: { tack: tackEra ?? 'none', sdk: sdkEra },
    tack: t,
    sdk: s,
    ratioTotal: ratio,
    ratioP50: round(t.p50Ms / s.p50Ms, 3),
    target: { ratioAtMost: 1.1, met: ratio <= 1.1 },
    /**
     * The whole bench process after a full GC: before anything connects, after the tack host alone is
     * connected, after the bare client connected too and both warmed up, and after all calls.
     */
    memory: { before, afterTackConnect, afterWarmup, afterCalls },
  };
}

export async function runCalls(options: CallsOptions = {}) {
  const opts: Required<CallsOptions> = {
    calls: options.calls ?? 5000,
    blocks: options.blocks ?? 10,
    warmup: options.warmup ?? 200,
  };
  const perBlock = Math.floor(opts.calls / opts.blocks);
  const tmp = tempDir('calls');
  try {
    return {
      description:
        `${perBlock * opts.blocks} sequential tools/call "echo" per side, tack (host.callTool) vs the bare SDK ` +
        `client, each with its own server process; ${opts.blocks} interleaved blocks of ${perBlock}, ` +
        `first side alternating; ${opts.warmup} unmeasured warm-up calls per side`,
      dualEra: await compare({ id: 'dualEra', script: fixtures.dual }, tmp.dir, opts),
      legacyOnly: await compare({ id: 'legacyOnly', script: fixtures.legacyWithPid }, tmp.dir, opts),
    };
  } finally {
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runCalls(), null, 2)}\n`);
}
