import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

describe('OpenTelemetry: gateway spans and metrics over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let project: TempProject;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js', ['--trace-tool']) } });
  });

  afterAll(async () => {
    project?.[Symbol.dispose]();
    await receiver?.close();
  });

  it('sends a SERVER span per tool call with the upstream request as its CLIENT child, without arguments', async () => {
    const gateway = await startGateway({
      config: project.load(),
      http: { port: 0 },
      telemetryEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
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
    const spans = receiver.spans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    const echo = byName.get('tools/call fx__echo');
    expect(echo, `spans received: ${[...byName.keys()].join(', ')}`).toBeDefined();
    expect(echo!.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'fx__echo',
      'tack.upstream.server': 'fx',
      'tack.upstream.tool': 'echo',
      'tack.outcome': 'ok',
    });
    expect(echo!.kind).toBe(2); // OTLP's SPAN_KIND_SERVER

    // The upstream request: a CLIENT span named by the upstream's own tool name, child of the gateway's span.
    const upstream = spans.find((s) => s.name === 'tools/call echo');
    expect(upstream).toBeDefined();
    expect(upstream!.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(upstream!.parentSpanId).toBe(echo!.spanId);
    expect(upstream!.traceId).toBe(echo!.traceId);
    expect(upstream!.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'tack.upstream.server': 'fx',
      'network.transport': 'pipe',
    });
    expect(upstream!.attributes['mcp.protocol.version']).toEqual(expect.any(String));

    // A tool that answers isError: both spans carry the conventions' error.type and an error status.
    const failed = byName.get('tools/call fx__fail')!;
    expect(failed.status?.code).toBe(2); // STATUS_CODE_ERROR
    expect(failed.attributes['error.type']).toBe('tool_error');
    const failedUpstream = spans.find((s) => s.name === 'tools/call fail')!;
    expect(failedUpstream.parentSpanId).toBe(failed.spanId);
    expect(failedUpstream.attributes['error.type']).toBe('tool_error');

    expect(receiver.everything()).not.toContain('secret-argument-value');
    const metricNames = JSON.stringify(receiver.metrics());
    expect(metricNames).toContain('mcp.server.operation.duration');
    expect(metricNames).toContain('tack.gateway.calls');
  });

  it("continues a client's trace from the request's _meta, and passes its own span's context upstream the same way", async () => {
    const gateway = await startGateway({
      config: project.load(),
      http: { port: 0 },
      telemetryEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
    });
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const client = new Client(
      { name: 'otel-trace', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    let seenUpstream: { traceparent?: string } = {};
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
      const result = await client.callTool({
        name: 'fx__trace',
        arguments: {},
        _meta: { traceparent: `00-${clientTrace}-${clientSpan}-01`, tracestate: 'vendor=1' },
      });
      seenUpstream = JSON.parse((result.content as Array<{ text: string }>)[0]!.text);
      // A malformed traceparent is not trace context: the call works and starts a trace of its own.
      const malformed = await client.callTool({
        name: 'fx__trace',
        arguments: {},
        _meta: { traceparent: 'x'.repeat(5000) },
      });
      expect(malformed.isError).toBeFalsy();
    } finally {
      await client.close();
      await gateway.close();
    }
    const spans = receiver.spans().filter((s) => s.name === 'tools/call fx__trace');
    const continued = spans.find((s) => s.traceId === clientTrace);
    expect(continued, JSON.stringify(spans)).toBeDefined();
    expect(continued!.parentSpanId).toBe(clientSpan);
    expect(spans.filter((s) => s.traceId !== clientTrace)).toHaveLength(1);
    // The upstream got the gateway's CLIENT span as its parent, in the same trace, with the client's tracestate.
    const upstream = receiver
      .spans()
      .find((s) => s.name === 'tools/call trace' && s.parentSpanId === continued!.spanId);
    expect(upstream).toBeDefined();
    expect(seenUpstream.traceparent).toBe(`00-${clientTrace}-${upstream!.spanId}-01`);
    expect(seenUpstream).toMatchObject({ tracestate: 'vendor=1' });
  });
});
