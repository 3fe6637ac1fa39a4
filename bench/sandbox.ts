import { join } from 'node:path';
import type { StdioServerConfig } from '../src/config/load.js';
import { type SandboxPolicy, SandboxResolver } from '../src/config/sandbox.js';
import { McpHost } from '../src/mcp/host.js';
import { sandboxSupport } from '../src/sandbox/support.js';
import { openDatabase } from '../src/store/database.js';
import { type EraCache, SqliteEraCache } from '../src/store/era-cache.js';
import { fixtures, isMain, log, p50p99, round, sleep, stdioServer, summarize, tempDir } from './util.js';

export interface SandboxBenchOptions {
  /** Measured starts per variant (default 15), after `warmups` (default 2). */
  reps?: number;
  warmups?: number;
  /** Calls per side and round (default 3000), in `blocks` (default 12) that rotate the order of the sides. */
  calls?: number;
  blocks?: number;
  /** Rounds of calls, each with fresh server processes; the figures pool them (default 3). */
  rounds?: number;
}

/** Pause after every teardown (the processes have exited) so the next start begins on an idle machine. */
const SETTLE_MS = 150;

/** Every order of three sides; rotating through all six puts each side after each other equally often. */
const ORDERS = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [0, 2, 1],
  [2, 1, 0],
  [1, 0, 2],
] as const;

function policies(dir: string) {
  const resolver = new SandboxResolver(new Map(), {
    workspace: dir,
    env: process.env,
    paths: { configDir: join(dir, 'config'), stateDir: join(dir, 'state') },
  });
  const resolve = (value: unknown) =>
    resolver.resolve({ value: value as never, file: '<bench>', path: 'sandbox' }, 'bench', [])!;
  return {
    readOnly: resolve('read-only'),
    // An allow-list adds the proxy and the in-sandbox forwarder (one more Node start).
    proxy: resolve({ profile: 'read-only', network: ['127.0.0.1:9'] }),
  };
}

const server = (name: string, sandbox?: SandboxPolicy): StdioServerConfig => ({
  ...stdioServer(name, fixtures.dual),
  ...(sandbox ? { sandbox } : {}),
});

/**
 * Start-up: `McpHost.start` of one dual-era fixture (connect + listings, warm era cache: one process) without a
 * sandbox, in a read-only sandbox without network, and in one with an allow-list (proxy and forwarder), the
 * variants rotating; the median difference is what the sandbox adds to a start.
 */
async function startup(cache: EraCache, dir: string, reps: number, warmups: number) {
  const { readOnly, proxy } = policies(dir);
  const variants = [
    { id: 'none', servers: [server('s1')] },
    { id: 'readOnlyNoNetwork', servers: [server('s1', readOnly)] },
    { id: 'allowListProxy', servers: [server('s1', proxy)] },
  ];
  const samples = new Map<string, number[]>(variants.map((v) => [v.id, []]));
  const errors: string[] = [];
  for (let rep = -warmups; rep < reps; rep++) {
    const shift = rep < 0 ? 0 : rep % variants.length;
    for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) {
      const started = performance.now();
      const host = await McpHost.start({
        config: { servers: variant.servers },
        eraCache: cache,
        logDir: false,
      });
      const ms = performance.now() - started;
      const status = host.servers()[0]!;
      if (status.status !== 'connected') errors.push(`${variant.id}: ${status.error?.message}`);
      await host.close(); // waits for the process (and its sandbox) to exit
      await sleep(SETTLE_MS);
      if (rep >= 0) samples.get(variant.id)!.push(ms);
    }
    log(`sandbox/startup: ${rep < 0 ? 'warm-up' : `rep ${rep + 1}/${reps}`} done`);
  }
  const none = summarize(samples.get('none')!);
  const readOnlyRun = summarize(samples.get('readOnlyNoNetwork')!);
  const proxyRun = summarize(samples.get('allowListProxy')!);
  const added = round(readOnlyRun.medianMs - none.medianMs);
  return {
    description: `McpHost.start of one dual-era fixture (connect + listings, warm era cache), median of ${reps} after ${warmups} warm-up, variants rotating`,
    none,
    readOnlyNoNetwork: readOnlyRun,
    allowListProxy: proxyRun,
    addedMs: { readOnlyNoNetwork: added, allowListProxy: round(proxyRun.medianMs - none.medianMs) },
    target: { addedAtMostMs: 20, met: added <= 20 },
    errors: errors.slice(0, 5),
  };
}

/**
 * A call: sequential `echo` through one host to a server without a sandbox, one in a read-only sandbox without
 * network, and a second one without (the A/A control: how far two identical sides drift apart), in blocks that
 * rotate the order of the sides.
 */
async function calls(dir: string, total: number, blocks: number, rounds: number) {
  const { readOnly } = policies(dir);
  const sides = ['plain', 'boxed', 'control'].map((name) => ({ name, latencies: [] as number[], wallMs: 0 }));
  const perRound: Array<{ ratioTotal: number; controlRatioTotal: number }> = [];
  for (let r = 0; r < rounds; r++) {
    const host = await McpHost.start({
      config: { servers: [server('plain'), server('boxed', readOnly), server('control')] },
      eraCache: false,
      logDir: false,
    });
    const before = sides.map((side) => side.wallMs);
    try {
      const call = (name: string) => host.callTool(`mcp__${name}__echo`, { text: 'hi' });
      for (const side of sides) for (let i = 0; i < 200; i++) await call(side.name);
      const perBlock = Math.floor(total / blocks);
      for (let b = 0; b < blocks; b++) {
        // Blocks continue the cycle across rounds, so the pooled result holds every order equally often.
        for (const index of ORDERS[(r * blocks + b) % ORDERS.length]!) {
          const side = sides[index]!;
          const started = performance.now();
          for (let i = 0; i < perBlock; i++) {
            const t = performance.now();
            await call(side.name);
            side.latencies.push(performance.now() - t);
          }
          side.wallMs += performance.now() - started;
        }
      }
    } finally {
      await host.close();
    }
    const [plainMs, boxedMs, controlMs] = sides.map((side, i) => side.wallMs - before[i]!) as [
      number,
      number,
      number,
    ];
    perRound.push({
      ratioTotal: round(boxedMs / plainMs, 3),
      controlRatioTotal: round(controlMs / plainMs, 3),
    });
    log(`sandbox/calls: round ${r + 1}/${rounds} done`);
  }
  const report = (side: (typeof sides)[number]) => {
    const sorted = [...side.latencies].sort((a, b) => a - b);
    return {
      calls: sorted.length,
      totalMs: round(side.wallMs),
      meanMs: round(sorted.reduce((a, b) => a + b, 0) / sorted.length, 3),
      ...p50p99(sorted, 3),
    };
  };
  const [plain, boxed, control] = sides.map(report) as [
    ReturnType<typeof report>,
    ReturnType<typeof report>,
    ReturnType<typeof report>,
  ];
  return {
    description: `${total} sequential echo calls per side and round through one McpHost, ${blocks} blocks rotating the order, after 200 warm-up calls each; ${rounds} rounds with fresh processes, pooled`,
    plain,
    boxed,
    control,
    ratioTotal: round(boxed.totalMs / plain.totalMs, 3),
    ratioP50: round(boxed.p50Ms / plain.p50Ms, 3),
    /** The same ratios for two servers without a sandbox: the noise floor. */
    controlRatioTotal: round(control.totalMs / plain.totalMs, 3),
    controlRatioP50: round(control.p50Ms / plain.p50Ms, 3),
    perRound,
  };
}

export async function runSandbox(options: SandboxBenchOptions = {}) {
  const support = await sandboxSupport();
  if (!support.available) return { skipped: support.reason };
  const tmp = tempDir('sandbox');
  const db = openDatabase(join(tmp.dir, 'store.db'));
  try {
    const cache = new SqliteEraCache(db);
    return {
      sandbox: `bubblewrap ${support.version}`,
      startup: await startup(cache, tmp.dir, options.reps ?? 15, options.warmups ?? 2),
      calls: await calls(tmp.dir, options.calls ?? 3000, options.blocks ?? 12, options.rounds ?? 3),
    };
  } finally {
    db.close();
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runSandbox(), null, 2)}\n`);
}
