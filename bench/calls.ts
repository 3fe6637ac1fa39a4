import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpHost } from '../src/mcp/host.js';
import {
  fixtures,
  isMain,
  log,
  memory,
  PidFile,
  p50p99,
  repoRoot,
  round,
  sdkClient,
  stdioServer,
  tempDir,
  waitForExit,
} from './util.js';

export interface CallsOptions {
  /** Calls per side (default 5000). */
  calls?: number;
  /** Blocks the calls are split into; each block runs the sides in the next of the 4 orders (default 8). */
  blocks?: number;
  /** Unmeasured calls per side before the first block (default 200). */
  warmup?: number;
  /** Rounds, each with fresh server processes; the figures pool them (default 3). */
  rounds?: number;
}

type Call = () => Promise<unknown>;

interface Side {
  latencies: number[];
  wallMs: number;
  /** CPU time of this (client) process during the side's blocks: the client-side cost, server excluded. */
  clientCpuMs: number;
  errors: number;
}

async function runBlock(call: Call, count: number, side: Side): Promise<void> {
  const cpu = process.cpuUsage();
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
  const used = process.cpuUsage(cpu);
  side.clientCpuMs += (used.user + used.system) / 1000;
}

function sideReport(side: Side) {
  const sorted = [...side.latencies].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return {
    calls: sorted.length,
    totalMs: round(side.wallMs),
    callsPerSec: Math.round((sorted.length / side.wallMs) * 1000),
    meanMs: round(mean, 3),
    ...p50p99(sorted, 3),
    maxMs: round(sorted.at(-1)!, 3),
    clientCpuUsPerCall: round((side.clientCpuMs * 1000) / sorted.length),
    errors: side.errors,
  };
}

async function bareClient(script: string, args: string[]): Promise<Client> {
  return sdkClient(
    new StdioClientTransport({ command: process.execPath, args: [script, ...args], cwd: repoRoot }),
  );
}

/**
 * The orders of the four sides (tack 0, sdk 1, control 2, sdk with its tools listed 3): a balanced Latin square
 * (Williams design), which puts each side in each position, and right after each other side, equally often: a
 * side that merely follows another (and inherits its GC debt or a cold cache) cannot bias the comparison.
 */
const ORDERS = [
  [0, 1, 3, 2],
  [1, 2, 0, 3],
  [2, 3, 1, 0],
  [3, 0, 2, 1],
] as const;

const newSide = (): Side => ({ latencies: [], wallMs: 0, clientCpuMs: 0, errors: 0 });

/**
 * One round: fresh server processes for the four sides (tack, the bare SDK client, a second bare SDK client as
 * an A/A control that shows how far two identical sides drift apart, and a bare SDK client that listed its tools
 * first, as tack does and as any client that offers the tools to a model must), a warm-up, then the blocks, each
 * running the sides in the next of the four orders. A client that holds a tools/list does more per call in the
 * SDK itself (the cached definition looked up, its input schema scanned for `x-mcp-header` on 2026-07-28, the
 * output schema's validator looked up): the listed side shows what of tack's cost is that.
 */
async function runRound(
  fixture: { id: string; script: string },
  pids: PidFile,
  options: Required<CallsOptions>,
  firstBlock: number,
) {
  const args = ['--pid-file', pids.file];
  const before = memory();
  const host = await McpHost.start({
    config: { servers: [stdioServer('s1', fixture.script, args)] },
    eraCache: false,
    logDir: false,
  });
  const afterTackConnect = memory();
  const client = await bareClient(fixture.script, args);
  const control = await bareClient(fixture.script, args);
  const listed = await bareClient(fixture.script, args);
  await listed.listTools();
  const eras = { tack: host.servers()[0]?.era ?? 'none', sdk: client.getProtocolEra() ?? 'none' };

  const echo = { name: 'echo', arguments: { text: 'hi' } };
  const calls: Array<[Call, Side]> = [
    [() => host.callTool('mcp__s1__echo', { text: 'hi' }), newSide()],
    [() => client.callTool(echo), newSide()],
    [() => control.callTool(echo), newSide()],
    [() => listed.callTool(echo), newSide()],
  ];
  const sink = newSide();
  for (const [call] of calls) await runBlock(call, options.warmup, sink);
  const afterWarmup = memory();

  const perBlock = Math.floor(options.calls / options.blocks);
  for (let b = 0; b < options.blocks; b++) {
    // Blocks continue the cycle across rounds, so the pooled result holds every order equally often.
    const order = ORDERS[(firstBlock + b) % ORDERS.length]!;
    for (const index of order) {
      const [call, side] = calls[index]!;
      await runBlock(call, perBlock, side);
    }
  }
  const afterCalls = memory();

  await host.close();
  await client.close();
  await control.close();
  await listed.close();
  await waitForExit(pids.takeNew());
  const [tack, sdk, sdkControl, sdkListed] = calls.map(([, side]) => side) as [Side, Side, Side, Side];
  return {
    eras,
    tack,
    sdk,
    sdkControl,
    sdkListed,
    memory: { before, afterTackConnect, afterWarmup, afterCalls },
  };
}

async function compare(
  fixture: { id: string; script: string },
  dir: string,
  options: Required<CallsOptions>,
) {
  const pids = new PidFile(join(dir, `${fixture.id}.pids`));
  const rounds: Awaited<ReturnType<typeof runRound>>[] = [];
  for (let r = 0; r < options.rounds; r++) {
    rounds.push(await runRound(fixture, pids, options, r * options.blocks));
    log(`calls ${fixture.id}: round ${r + 1}/${options.rounds} done`);
  }
  const pool = (pick: (r: (typeof rounds)[number]) => Side): Side => ({
    latencies: rounds.flatMap((r) => pick(r).latencies),
    wallMs: rounds.reduce((ms, r) => ms + pick(r).wallMs, 0),
    clientCpuMs: rounds.reduce((ms, r) => ms + pick(r).clientCpuMs, 0),
    errors: rounds.reduce((n, r) => n + pick(r).errors, 0),
  });
  const tack = sideReport(pool((r) => r.tack));
  const sdk = sideReport(pool((r) => r.sdk));
  const sdkControl = sideReport(pool((r) => r.sdkControl));
  const sdkListed = sideReport(pool((r) => r.sdkListed));
  const ratio = round(tack.totalMs / sdk.totalMs, 3);
  return {
    eras: rounds[0]!.eras,
    /** All rounds pooled. */
    tack,
    sdk,
    sdkControl,
    sdkListed,
    ratioTotal: ratio,
    ratioP50: round(tack.p50Ms / sdk.p50Ms, 3),
    ratioClientCpu: round(tack.clientCpuUsPerCall / sdk.clientCpuUsPerCall, 3),
    /** tack against a bare SDK client that listed its tools too (the SDK's own per-call work for a listed tool). */
    ratioClientCpuVsListed: round(tack.clientCpuUsPerCall / sdkListed.clientCpuUsPerCall, 3),
    ratioTotalVsListed: round(tack.totalMs / sdkListed.totalMs, 3),
    /** The same ratios for two identical bare SDK sides: the noise floor of this comparison. */
    controlRatioTotal: round(sdkControl.totalMs / sdk.totalMs, 3),
    controlRatioP50: round(sdkControl.p50Ms / sdk.p50Ms, 3),
    controlRatioClientCpu: round(sdkControl.clientCpuUsPerCall / sdk.clientCpuUsPerCall, 3),
    /** Each round separately (fresh server processes each time): how much the ratios move between runs. */
    perRound: rounds.map((r) => {
      const [t, s, c, l] = [
        sideReport(r.tack),
        sideReport(r.sdk),
        sideReport(r.sdkControl),
        sideReport(r.sdkListed),
      ];
      return {
        totalMs: { tack: t.totalMs, sdk: s.totalMs, sdkControl: c.totalMs, sdkListed: l.totalMs },
        ratioTotal: round(t.totalMs / s.totalMs, 3),
        ratioP50: round(t.p50Ms / s.p50Ms, 3),
        ratioClientCpu: round(t.clientCpuUsPerCall / s.clientCpuUsPerCall, 3),
        ratioClientCpuVsListed: round(t.clientCpuUsPerCall / l.clientCpuUsPerCall, 3),
        controlRatioTotal: round(c.totalMs / s.totalMs, 3),
        controlRatioClientCpu: round(c.clientCpuUsPerCall / s.clientCpuUsPerCall, 3),
      };
    }),
    target: {
      ratioAtMost: 1.1,
      met: ratio <= 1.1,
      clientCpuMet: tack.clientCpuUsPerCall / sdk.clientCpuUsPerCall <= 1.1,
    },
    /**
     * The whole bench process after a full GC, first round: before anything connects, after the tack host
     * alone is connected, after both bare clients connected too and all warmed up, and after all calls;
     * then after the last round's calls.
     */
    memory: { ...rounds[0]!.memory, afterLastRound: rounds.at(-1)!.memory.afterCalls },
  };
}

export async function runCalls(options: CallsOptions = {}) {
  const opts: Required<CallsOptions> = {
    calls: options.calls ?? 5000,
    blocks: options.blocks ?? 8,
    warmup: options.warmup ?? 200,
    rounds: options.rounds ?? 3,
  };
  const perBlock = Math.floor(opts.calls / opts.blocks);
  const tmp = tempDir('calls');
  try {
    return {
      description:
        `${perBlock * opts.blocks} sequential tools/call "echo" per side and round: tack (host.callTool), ` +
        `the bare SDK client, a second bare SDK client as an A/A control, and a bare SDK client that listed its tools ` +
        `first (as tack does), each with its own server ` +
        `process; ${opts.blocks} blocks of ${perBlock}, cycling through 4 side orders (a balanced Latin square); ${opts.warmup} ` +
        `unmeasured warm-up calls per side; ${opts.rounds} rounds with fresh processes, pooled`,
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
