import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

interface OtlpSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number };
}

/**
 * A local OTLP/HTTP receiver (the exporters' JSON encoding) on 127.0.0.1: it keeps what arrives at /v1/traces
 * and /v1/metrics, as a collector would receive it.
 */
describe('OpenTelemetry: gateway spans and metrics over OTLP/HTTP', () => {
  let receiver: Server;
  let endpoint: string;
  const received: Record<string, unknown[]> = { '/v1/traces': [], '/v1/metrics': [] };
  let project: TempProject;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          received[req.url ?? '']?.push(JSON.parse(body));
        } catch {
          received[req.url ?? '']?.push({ unparsable: body.slice(0, 200) });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
  });

  afterAll(async () => {
    project?.[Symbol.dispose]();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('sends a span per tool call, named and attributed after the MCP conventions, without arguments', async () => {
    const gateway = await startGateway({
      config: project.load(),
      http: { port: 0 },
      telemetryEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    });
    const client = new Client({ name: 'otel', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
      await client.callTool({ name: 'fx__echo', arguments: { text: 'secret-argument-value' } });
      await client.callTool({ name: 'fx__fail', arguments: {} });
    } finally {
      await client.close();
      // Shutting down flushes the batch processor and the metric reader.
      await gateway.close();
    }
    const spans = (
      received['/v1/traces'] as Array<{ resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }>
    )
      .flatMap((r) => r.resourceSpans)
      .flatMap((r) => r.scopeSpans)
      .flatMap((s) => s.spans);
    const byName = new Map(spans.map((s) => [s.name, s]));
    const echo = byName.get('tools/call fx__echo');
    expect(echo, `spans received: ${[...byName.keys()].join(', ')}`).toBeDefined();
    const attrs = Object.fromEntries(echo!.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attrs).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'fx__echo',
      'tack.upstream.server': 'fx',
      'tack.upstream.tool': 'echo',
      'tack.outcome': 'ok',
    });
    expect(echo!.kind).toBe(2); // OTLP's SPAN_KIND_SERVER
    expect(byName.get('tools/call fx__fail')?.status?.code).toBe(2); // STATUS_CODE_ERROR
    expect(JSON.stringify(received)).not.toContain('secret-argument-value');
    const metricNames = JSON.stringify(received['/v1/metrics']);
    expect(metricNames).toContain('mcp.server.operation.duration');
    expect(metricNames).toContain('tack.gateway.calls');
  });
});
