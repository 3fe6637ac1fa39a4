import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { context, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../src/agent/model.js';
import { AgentSession } from '../../src/agent/session.js';
import { startGateway } from '../../src/servers/gateway/start.js';
import { MAX_ATTRIBUTE_CHARS, MAX_SPAN_NAME } from '../../src/telemetry/spans.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { fixtureEntry } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const SECRET = 'sk-live-secret-in-the-prompt-5d1e';

const { fake, project, defer } = testScope();

/** An application's tracer provider with an in-memory exporter, as a library user would register one. */
function memoryTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  defer(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  return exporter;
}

const hasControl = (text: string) => [...text].some((c) => c.charCodeAt(0) < 0x20);

/** Everything a span would export: name, attributes, status, events (exceptions included). */
function exported(spans: ReadableSpan[]): string {
  return JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status, s.events]));
}

async function session(url: Awaited<ReturnType<typeof fake>>, p: ReturnType<typeof project>) {
  return AgentSession.create({
    model: resolveModel('openai:gpt-4.1', providerEnv(url)),
    cwd: p.dir,
    env: p.env,
    sessionsDir: p.home,
    maxRetries: 0,
  });
}

/**
 * A hostile (or merely chatty) model API and a hostile model, against the spans tack and the AI SDK export: nothing
 * of the prompt may leave through an error message, and nothing the model invents may make a span unbounded.
 */
describe('hostile: what reaches exported spans', () => {
  it("a provider error quoting the prompt is not exported (the AI SDK's recordException and status message)", async () => {
    const exporter = memoryTracing();
    const p = project('tack-otel-hostile-');
    // Providers do quote the request back: "Invalid 'messages[0].content': ... <the content>".
    const model = await fake(() => ({
      error: { status: 400, message: `Invalid 'messages[1].content': '${SECRET}: do it' is not allowed` },
    }));
    const s = await session(model, p);
    const result = await s.run(`${SECRET}: do it`);
    expect(result.reason).toBe('error');

    const spans = exporter.getFinishedSpans();
    const names = spans.map((s) => s.name);
    expect(names).toContain('ai.streamText');
    expect(exported(spans)).not.toContain(SECRET);
    // The failure is still said: an error status and the error's class, on the AI SDK's span and on tack's.
    const sdk = spans.find((s) => s.name === 'ai.streamText')!;
    expect(sdk.status.code).toBe(2);
    const chat = spans.find((s) => s.name === 'chat gpt-4.1')!;
    expect(chat.status.code).toBe(2);
    expect(chat.attributes['error.type']).toEqual(expect.any(String));
  });

  it('a tool name the model invents, 100,000 characters with control characters, gives a bounded span', async () => {
    const exporter = memoryTracing();
    const p = project('tack-otel-hostile-');
    const invented = `evil\n\u001b[31m${'x'.repeat(100_000)}`;
    const model = await fake((_request, index) =>
      index === 0 ? { toolCalls: [{ name: invented, input: {} }] } : { text: 'done' },
    );
    const s = await session(model, p);
    const result = await s.run('call something');
    expect(result.reason).toBe('completed');

    const spans = exporter.getFinishedSpans();
    const tool = spans.find((s) => s.name.startsWith('execute_tool evil'));
    expect(tool, spans.map((s) => s.name.slice(0, 40)).join(', ')).toBeDefined();
    for (const span of spans) {
      expect(span.name.length, span.name.slice(0, 40)).toBeLessThanOrEqual(MAX_SPAN_NAME);
      expect(hasControl(span.name), span.name.slice(0, 40)).toBe(false);
      for (const [key, value] of Object.entries(span.attributes)) {
        if (typeof value === 'string') {
          expect(value.length, key).toBeLessThanOrEqual(MAX_ATTRIBUTE_CHARS);
          expect(hasControl(value), key).toBe(false);
        }
      }
    }
    expect(tool!.attributes['gen_ai.tool.name']).toMatch(/^evil\?\?\[31mx+…$/);
  });
});

/**
 * The gateway's side: a hostile upstream names a tool with 20,000 characters and control characters, and a hostile
 * client invents 300 tool names. Spans stay bounded, and the metrics keep one series per server and outcome: the
 * invented names create none (an exporter keeps every series it has seen for the life of the process).
 */
describe('hostile: the gateway spans and metrics against invented names', () => {
  it('bounds a hostile tool name and keeps metric series to servers and outcomes', async () => {
    const receiver = await startOtlpReceiver();
    defer(() => receiver.close());
    const p = project('tack-otel-gw-');
    p.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
    const gateway = await startGateway({
      config: p.load(),
      http: { port: 0 },
      telemetryEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
    });
    const client = new Client({ name: 'otel', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
      const long = `z\u0007${'y'.repeat(20_000)}`;
      await client.callTool({ name: 'fx__add_tool', arguments: { name: long } });
      let served: string | undefined;
      for (let i = 0; i < 50 && !served; i++) {
        served = (await client.listTools()).tools.map((t) => t.name).find((n) => n.includes('yyyy'));
        if (!served) await new Promise((r) => setTimeout(r, 100));
      }
      expect(served).toBeDefined();
      await client.callTool({ name: served!, arguments: {} });
      for (let i = 0; i < 300; i++)
        await client.callTool({ name: `invented_${i}`, arguments: {} }).catch(() => undefined);
    } finally {
      await client.close();
      await gateway.close();
    }
    const spans = receiver.spans();
    expect(spans.some((s) => s.name.startsWith('tools/call fx__z'))).toBe(true);
    for (const span of spans) {
      expect(span.name.length).toBeLessThanOrEqual(MAX_SPAN_NAME);
      expect(hasControl(span.name)).toBe(false);
      for (const value of Object.values(span.attributes))
        if (typeof value === 'string') expect(value.length).toBeLessThanOrEqual(MAX_ATTRIBUTE_CHARS);
    }
    const metrics = JSON.stringify(receiver.metrics());
    expect(metrics).not.toContain('invented_');
    expect(metrics).not.toContain('yyyy');
    // Series of the call counter: one per (server, outcome) seen.
    const series = new Set<string>();
    for (const body of receiver.metrics() as MetricsBody[])
      for (const r of body.resourceMetrics ?? [])
        for (const s of r.scopeMetrics ?? [])
          for (const m of s.metrics ?? [])
            if (m.name === 'tack.gateway.calls')
              for (const d of m.sum?.dataPoints ?? []) series.add(JSON.stringify(d.attributes));
    expect(series.size).toBeGreaterThan(0);
    expect(series.size).toBeLessThanOrEqual(3);
  }, 60_000);
});

interface MetricsBody {
  resourceMetrics?: Array<{
    scopeMetrics?: Array<{
      metrics?: Array<{ name: string; sum?: { dataPoints?: Array<{ attributes?: unknown }> } }>;
    }>;
  }>;
}
