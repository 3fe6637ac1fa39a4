import { createServer, type Socket } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

describe('hostile: an OTLP collector that accepts and never answers', () => {
  /**
   * The drain waits for requests in flight, then flushes spans and metrics: to a collector that never answers that
   * flush gives up after the exporter timeout (OTEL_EXPORTER_OTLP_TIMEOUT, read from the variables the gateway is
   * given), so a drain ends within its own timeout plus that one. Calls meanwhile are answered.
   */
  it('calls are answered, and the drain ends within its timeout plus the exporter timeout', async () => {
    const sockets = new Set<Socket>();
    const hole = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    const port = (hole.address() as { port: number }).port;
    using project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
    const gateway = await startGateway({
      config: project.load(),
      http: { port: 0 },
      telemetryEnv: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '2000',
      },
    });
    const client = new Client({ name: 'hole', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    for (let i = 0; i < 20; i++) {
      const result = await client.callTool({ name: 'fx__echo', arguments: { text: `h${i}` } });
      expect(result.isError).toBeFalsy();
    }
    await client.close();
    const started = Date.now();
    await gateway.drain(1_000);
    const took = Date.now() - started;
    for (const s of sockets) s.destroy();
    hole.close();
    expect(sockets.size).toBeGreaterThan(0); // the exporters did reach the collector
    // 1 s of drain (nothing in flight: none of it used), 2 s of exporter timeout, and room for a loaded machine;
    // without the timeout passed through, the exporter waits its own 10 s.
    expect(took).toBeLessThan(9_000);
  }, 60_000);
});
