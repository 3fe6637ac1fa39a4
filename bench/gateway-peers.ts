import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import autocannon from 'autocannon';
import { cachedPackage, installedVersion } from '../scripts/npm-cache.js';
import { freePort, type Service, startService } from '../test/helpers/processes.js';
import { fixtures, isMain, log, median, repoRoot, round, sleep, tempDir } from './util.js';

/**
 * `tack serve --http` side by side with the two stdio-to-HTTP gateways a user would pick instead, mcp-proxy and
 * supergateway (devDependencies, run from node_modules: no network), each in front of the same stdio fixture.
 * Load comes from autocannon in this process, for both protocol eras: 2025-era clients with a session each
 * (every connection its own session, as separate clients are), and 2026-07-28 clients (stateless requests).
 * The peers and eras are interleaved: every round runs each era on each peer, in a rotating order, and the
 * figures pool the rounds. CPU is read from /proc for the gateway process and, apart, for the processes it
 * started (the upstream fixtures); RSS is sampled every second across all rounds, so a process's samples span
 * its whole time under load.
 */

export interface PeerOptions {
  /** Seconds of load per peer, era and round (default 5). */
  seconds?: number;
  /** Rounds (default 3). */
  rounds?: number;
  /** Concurrent connections (default 16). */
  connections?: number;
  /** Which peers to run (default all three). */
  peers?: readonly PeerName[];
}

export type PeerName = 'tack' | 'mcp-proxy' | 'supergateway';
export type Era = 'legacy' | 'modern';

export interface Peer {
  name: PeerName;
  service: Service;
  url: string;
  /** The fixture's echo tool, as this gateway names it. */
  tool: string;
}

export interface Recorded {
  headers: Record<string, string>;
  body: string;
}

const BIN = join(repoRoot, 'bin/tack.js');
/**
 * The peers are installed on first use into node_modules/.cache (scripts/npm-cache.ts), not by `npm ci`: only this
 * benchmark needs them, and mcp-proxy needs Node 22 (an engine warning on every install otherwise). Pinned to the
 * versions the figures in docs/benchmarks.md were measured with.
 */
const PEERS_CACHE = join(repoRoot, 'node_modules/.cache/tack-bench-peers');
const PEER_VERSIONS = { 'mcp-proxy': '6.7.19', supergateway: '4.0.0' } as const;
type PeerPackage = keyof typeof PEER_VERSIONS;

async function peerEntry(name: PeerPackage): Promise<string> {
  const folder = await cachedPackage(
    join(PEERS_CACHE, name),
    name,
    PEER_VERSIONS[name],
    `node_modules/.cache/tack-bench-peers/${name}`,
  );
  return join(folder, name === 'mcp-proxy' ? 'dist/bin/mcp-proxy.mjs' : 'dist/index.js');
}
const USER_HZ_MS = 10;

function startProcess(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<Service> {
  return startService(process.execPath, args, { env, ready, timeoutMs: 120_000 });
}

/** Waits until something accepts a POST on `url` (for a peer that prints nothing when ready). */
async function waitForHttp(url: string, service: Service): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (service.process.exitCode !== null) throw new Error(`exited before ready:\n${service.output()}`);
    try {
      await fetch(url, { method: 'GET' });
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${url} not ready within 60 s:\n${service.output()}`);
}

export async function startPeer(name: PeerName, home: string, dir: string): Promise<Peer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const fixture = `${process.execPath} ${fixtures.dual}`;
  if (name === 'tack') {
    const config = join(dir, 'tack.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [fixtures.dual] } } }),
    );
    const service = await startProcess(
      [BIN, 'serve', '--config', config, '--http', `127.0.0.1:${port}`],
      /tack serve: .* at http/,
      { ...process.env, TACK_HOME: home },
    );
    return { name, service, url, tool: 'fx__echo' };
  }
  if (name === 'mcp-proxy') {
    // Defaults otherwise (stateful sessions, event store, both eras): what a user gets.
    const service = await startProcess(
      [
        await peerEntry('mcp-proxy'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--',
        process.execPath,
        fixtures.dual,
      ],
      /starting server on port/,
    );
    await waitForHttp(url, service);
    return { name, service, url, tool: 'echo' };
  }
  // supergateway: stateful, so a 2025-era session keeps one child (stateless spawns a child per request);
  // logging off, since at its default (`info`) it writes every message it relays. It then prints nothing, so
  // readiness is its port answering.
  const child = spawn(
    process.execPath,
    [
      await peerEntry('supergateway'),
      '--stdio',
      fixture,
      '--outputTransport',
      'streamableHttp',
      '--stateful',
      '--port',
      String(port),
    ].concat(['--logLevel', 'none']),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const service: Service = {
    process: child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
  await waitForHttp(url, service);
  return { name, service, url, tool: 'echo' };
}

/** Connects an SDK client of `era` and records the POST of one `tools/call` it makes, for replay. */
export async function record(
  url: string,
  tool: string,
  era: Era,
): Promise<{ client: Client; request: Recorded }> {
  let recorded: Recorded | undefined;
  const client = new Client(
    { name: 'bench', version: '0' },
    { versionNegotiation: { mode: era === 'modern' ? 'auto' : 'legacy' } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: async (input, init) => {
        if (typeof init?.body === 'string' && init.body.includes('"tools/call"'))
          recorded = { headers: Object.fromEntries(new Headers(init.headers)), body: init.body };
        return fetch(input, init);
      },
    }),
  );
  if (client.getProtocolEra() !== era)
    throw new Error(`${url}: wanted a ${era} client, got ${client.getProtocolEra()}`);
  const result = await client.callTool({ name: tool, arguments: { text: 'hello' } });
  if (result.isError) throw new Error(`${url}: ${JSON.stringify(result)}`);
  return { client, request: recorded! };
}

/** utime + stime of one process, in ms. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * USER_HZ_MS;
  } catch {
    return 0;
  }
}

/** The live processes below `pid` (the upstream children a gateway started). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let children: string[] = [];
      try {
        children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean);
      } catch {}
      for (const child of children) {
        out.push(Number(child));
        visit(Number(child));
      }
    }
  };
  visit(pid);
  return out;
}

export function rssMB(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? round(Number(kb) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

export interface Run {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** CPU of the gateway process per request, and of the processes it started (upstreams), in ms. */
  gatewayCpuMsPerRequest: number;
  upstreamCpuMsPerRequest: number;
}

export async function load(
  peer: Peer,
  requests: Recorded[],
  seconds: number,
  connections: number,
  onSecond: () => void,
): Promise<Run> {
  const pid = peer.service.process.pid!;
  const children = () => descendants(pid).reduce((sum, p) => sum + cpuMs(p), 0);
  const gatewayBefore = cpuMs(pid);
  const upstreamBefore = children();
  let next = 0;
  const ticker = setInterval(onSecond, 1000);
  const result = await autocannon({
    url: peer.url,
    method: 'POST',
    headers: requests[0]!.headers,
    body: requests[0]!.body,
    connections,
    duration: seconds,
    // One recorded request (and so one session) per connection: 16 connections are 16 clients.
    setupClient: (client: { setHeaders(h: Record<string, string>): void; setBody(b: string): void }) => {
      const request = requests[next++ % requests.length]!;
      client.setHeaders(request.headers);
      client.setBody(request.body);
    },
  } as autocannon.Options);
  clearInterval(ticker);
  const total = result.requests.total;
  return {
    requests: total,
    seconds,
    requestsPerSecond: round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    gatewayCpuMsPerRequest: round((cpuMs(pid) - gatewayBefore) / Math.max(1, total), 3),
    upstreamCpuMsPerRequest: round((children() - upstreamBefore) / Math.max(1, total), 3),
  };
}

function pool(runs: Run[]) {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const weighted = (f: (r: Run) => number) =>
    round(runs.reduce((n, r) => n + f(r) * r.requests, 0) / Math.max(1, requests), 3);
  return {
    requests,
    requestsPerSecond: round(requests / seconds),
    perRoundRequestsPerSecond: runs.map((r) => r.requestsPerSecond),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    gatewayCpuMsPerRequest: weighted((r) => r.gatewayCpuMsPerRequest),
    upstreamCpuMsPerRequest: weighted((r) => r.upstreamCpuMsPerRequest),
  };
}

export async function runGatewayPeers(options: PeerOptions = {}) {
  const seconds = options.seconds ?? 5;
  const rounds = options.rounds ?? 3;
  const connections = options.connections ?? 16;
  const names = options.peers ?? (['tack', 'mcp-proxy', 'supergateway'] as const);
  const tmp = tempDir('gateway-peers');
  const peers: Peer[] = [];
  const clients: Client[] = [];
  try {
    for (const name of names) {
      log(`gateway peers: starting ${name}`);
      peers.push(await startPeer(name, join(tmp.dir, 'home'), tmp.dir));
    }
    // Requests to replay: one per connection for the 2025 era (each its own session), one for 2026-07-28.
    const requests = new Map<string, Recorded[]>();
    for (const peer of peers) {
      const modern = await record(peer.url, peer.tool, 'modern');
      clients.push(modern.client);
      requests.set(`${peer.name} modern`, [modern.request]);
      const legacy: Recorded[] = [];
      for (let i = 0; i < connections; i++) {
        const session = await record(peer.url, peer.tool, 'legacy');
        clients.push(session.client);
        legacy.push(session.request);
      }
      requests.set(`${peer.name} legacy`, legacy);
    }
    const rss = new Map<string, Array<{ s: number; mb: number | undefined }>>(
      peers.map((p) => [p.name, [{ s: 0, mb: rssMB(p.service.process.pid!) }]]),
    );
    const loaded = new Map<string, number>(peers.map((p) => [p.name, 0]));
    const runs = new Map<string, Run[]>();
    // Warm-up: 2 s of each era on each peer, not counted.
    for (const era of ['legacy', 'modern'] as const)
      for (const peer of peers)
        await load(peer, requests.get(`${peer.name} ${era}`)!, 2, connections, () => {});
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const era of ['legacy', 'modern'] as const) {
        const order = peers.map((_, i) => peers[(i + round_) % peers.length]!);
        for (const peer of order) {
          log(`gateway peers: round ${round_ + 1}/${rounds}, ${era}, ${peer.name}`);
          const run = await load(peer, requests.get(`${peer.name} ${era}`)!, seconds, connections, () => {
            const s = (loaded.get(peer.name) ?? 0) + 1;
            loaded.set(peer.name, s);
            rss.get(peer.name)!.push({ s, mb: rssMB(peer.service.process.pid!) });
          });
          const key = `${peer.name} ${era}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
        }
      }
    }
    const table: Record<string, Record<string, ReturnType<typeof pool>>> = {};
    for (const era of ['legacy', 'modern'] as const) {
      table[era] = {};
      for (const peer of peers) table[era]![peer.name] = pool(runs.get(`${peer.name} ${era}`)!);
    }
    const ratio = (era: Era) => {
      const best = Math.max(
        ...peers.filter((p) => p.name !== 'tack').map((p) => table[era]![p.name]!.requestsPerSecond),
      );
      const tack = table[era]!.tack?.requestsPerSecond;
      return tack === undefined || !Number.isFinite(best) ? undefined : round(tack / best, 2);
    };
    return {
      description:
        `tack serve --http, mcp-proxy ${version('mcp-proxy')} and supergateway ${version('supergateway')} (--stateful), each in front of ` +
        `the dual-era stdio fixture; autocannon from the bench process, ${connections} connections replaying a recorded tools/call "echo" ` +
        `(2025 era: one session per connection; 2026-07-28: stateless), ${rounds} rounds x ${seconds} s per peer and era after 2 s ` +
        'of warm-up, peers in a rotating order; CPU per request from /proc (the gateway process, and apart the upstream processes it started); RSS every second of load',
      seconds,
      rounds,
      connections,
      eras: table,
      tackOverBestPeer: { legacy: ratio('legacy'), modern: ratio('modern') },
      rssMBOverLoadSeconds: Object.fromEntries(rss),
    };
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all(peers.map((peer) => peer.service.stop()));
    tmp.remove();
  }
}

function version(name: PeerPackage): string {
  return installedVersion(join(PEERS_CACHE, name), name) ?? PEER_VERSIONS[name];
}

if (isMain(import.meta.url)) {
  const peers = process.env.PEERS?.split(',') as PeerName[] | undefined;
  process.stdout.write(
    `${JSON.stringify(
      await runGatewayPeers({
        seconds: Number(process.env.SECONDS_PER_RUN ?? 5),
        rounds: Number(process.env.ROUNDS ?? 3),
        ...(peers ? { peers } : {}),
      }),
      null,
      2,
    )}\n`,
  );
}
