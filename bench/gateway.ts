import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { freePort, type Service, startService } from '../test/helpers/processes.js';
import { type PeerOptions, runGatewayPeers } from './gateway-peers.js';
import { fixtures, isMain, log, p50p99, repoRoot, round, sdkClient, tempDir } from './util.js';

const BIN = join(repoRoot, 'bin/tack.js');
const HTTP_FIXTURE = join(repoRoot, 'dist/test/fixtures/servers/http-main.js');

export interface GatewayOptions {
  /** Sequential calls per side (default 2000). */
  calls?: number;
  /** The load against mcp-proxy and supergateway (gateway-peers.ts). */
  peers?: PeerOptions;
}

/** A Node process started and awaited until `ready` shows in its output, however long that takes. */
function startProcess(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<Service> {
  return startService(process.execPath, args, { env, ready, timeoutMs: 24 * 60 * 60 * 1000 });
}

/**
 * Sequential calls, the two sides interleaved in blocks; latency percentiles per side. `echo` measures pure
 * overhead; `slow` with one 10 ms step stands for a tool that does some work, as real tools do.
 */
async function compare(
  sides: Record<'direct' | 'gateway', { client: Client; prefix: string }>,
  calls: number,
  work: 'echo' | 'tool-10ms' = 'echo',
  gatewayPid?: number,
) {
  let gatewayCpuMs = 0;
  const call = (side: 'direct' | 'gateway') =>
    work === 'echo'
      ? sides[side].client.callTool({ name: `${sides[side].prefix}echo`, arguments: { text: 'hello' } })
      : sides[side].client.callTool({
          name: `${sides[side].prefix}slow`,
          arguments: { steps: 1, delayMs: 10 },
        });
  const latencies: Record<string, number[]> = { direct: [], gateway: [] };
  const blocks = 10;
  for (const side of ['direct', 'gateway'] as const) {
    for (let i = 0; i < 50; i++) await call(side);
  }
  for (let block = 0; block < blocks; block++) {
    const order = block % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const);
    for (const side of order) {
      const cpuBefore = side === 'gateway' && gatewayPid ? processCpuMs(gatewayPid) : 0;
      for (let i = 0; i < calls / blocks; i++) {
        const started = performance.now();
        await call(side);
        latencies[side]!.push(performance.now() - started);
      }
      if (side === 'gateway' && gatewayPid) gatewayCpuMs += processCpuMs(gatewayPid) - cpuBefore;
    }
  }
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return {
      calls: sorted.length,
      ...p50p99(sorted, 3),
      totalMs: round(sorted.reduce((a, b) => a + b, 0)),
    };
  };
  const direct = stats(latencies.direct!);
  const gateway = stats(latencies.gateway!);
  return {
    direct,
    gateway,
    // The gateway process's own CPU (user + system, from /proc) per call: what tack adds besides waiting.
    ...(gatewayPid ? { gatewayCpuMsPerCall: round(gatewayCpuMs / gateway.calls, 3) } : {}),
    ratioP50: round(gateway.p50Ms / direct.p50Ms, 2),
    ratioP99: round(gateway.p99Ms / direct.p99Ms, 2),
  };
}

/** One transport's comparison: `calls` echo calls per side, then a quarter as many of the 10 ms tool. */
async function compareBoth(
  label: string,
  direct: Client,
  gateway: Client,
  calls: number,
  gatewayPid?: number,
) {
  log(`gateway ${label}: ${calls} calls per side`);
  const sides = { direct: { client: direct, prefix: '' }, gateway: { client: gateway, prefix: 'fx__' } };
  return {
    echo: await compare(sides, calls, 'echo', gatewayPid),
    tenMsTool: await compare(sides, calls / 4, 'tool-10ms', gatewayPid),
  };
}

/** utime + stime of a process, in ms (/proc counts clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

export async function runGateway(options: GatewayOptions = {}) {
  const calls = options.calls ?? 2000;
  const tmp = tempDir('gateway');
  const env = { ...process.env, TACK_HOME: join(tmp.dir, 'home') };
  const started: Service[] = [];
  const clients: Client[] = [];
  try {
    // stdio: client -> fixture, and client -> tack serve (stdio) -> fixture.
    const stdioConfig = join(tmp.dir, 'stdio.json');
    writeFileSync(
      stdioConfig,
      JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [fixtures.dual] } } }),
    );
    const directStdio = await sdkClient(
      new StdioClientTransport({ command: process.execPath, args: [fixtures.dual], stderr: 'ignore' }),
    );
    const gatewayStdioTransport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', '--config', stdioConfig],
      env: env as Record<string, string>,
      stderr: 'ignore',
    });
    const gatewayStdio = await sdkClient(gatewayStdioTransport);
    clients.push(directStdio, gatewayStdio);
    const stdio = await compareBoth(
      'stdio',
      directStdio,
      gatewayStdio,
      calls,
      gatewayStdioTransport.pid ?? undefined,
    );

    // HTTP: the fixture as its own process; tack serve --http in front of it.
    const fixture = await startProcess([HTTP_FIXTURE], /http:\/\/127\.0\.0\.1:\d+\/mcp/);
    started.push(fixture);
    const fixtureUrl = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(fixture.output())![0];
    const httpConfig = join(tmp.dir, 'http.json');
    writeFileSync(httpConfig, JSON.stringify({ mcpServers: { fx: { type: 'http', url: fixtureUrl } } }));
    const port = await freePort();
    const gatewayProcess = await startProcess(
      [BIN, 'serve', '--config', httpConfig, '--http', `127.0.0.1:${port}`],
      /tack serve: .* at http/,
      env,
    );
    started.push(gatewayProcess);
    const gatewayUrl = `http://127.0.0.1:${port}/mcp`;
    const directHttp = await sdkClient(new StreamableHTTPClientTransport(new URL(fixtureUrl)));
    const gatewayHttp = await sdkClient(new StreamableHTTPClientTransport(new URL(gatewayUrl)));
    clients.push(directHttp, gatewayHttp);
    const http = await compareBoth('HTTP', directHttp, gatewayHttp, calls, gatewayProcess.process.pid);

    // Close the single-client sides before the load, so they do not share the machine with it.
    await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
    await Promise.all(started.splice(0).map((service) => service.stop()));
    const peers = await runGatewayPeers(options.peers);
    return {
      description:
        `${calls} sequential tools/call "echo" per side, direct to the fixture vs through tack serve, interleaved ` +
        `in 10 blocks after 50 warm-up calls (and ${calls / 4} of a tool that works 10 ms); then tack serve --http ` +
        'under load side by side with mcp-proxy and supergateway (peers)',
      stdio: stdio.echo,
      http: http.echo,
      withTenMsTool: { calls: calls / 4, stdio: stdio.tenMsTool, http: http.tenMsTool },
      overheadP50Ms: {
        stdio: round(stdio.echo.gateway.p50Ms - stdio.echo.direct.p50Ms, 3),
        http: round(http.echo.gateway.p50Ms - http.echo.direct.p50Ms, 3),
      },
      peers,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await Promise.all(started.map((service) => service.stop()));
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runGateway(), null, 2)}\n`);
}
