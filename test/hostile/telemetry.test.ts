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
import { MAX_ATTRIBUTE_CHARS, MAX_SPAN_NAME } from '../../src/telemetry/spans.js';
import { providerEnv } from '../helpers/fake-provider.js';
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
