import { metrics, SpanStatusCode, trace } from '@opentelemetry/api';
import { VERSION } from '../version.js';

/** The variable that turns export on (the OpenTelemetry SDK's own name); without it nothing is loaded. */
export const OTLP_ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT';

export interface Telemetry {
  /** Sends what is buffered and stops the exporters (a drain's last step). */
  shutdown(): Promise<void>;
}

const NONE: Telemetry = { shutdown: async () => {} };

/**
 * The official OpenTelemetry SDK, exporting traces and metrics over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (the
 * exporters read the standard OTEL_* variables themselves: headers, per-signal endpoints, timeouts). Without the
 * variable nothing is imported: the gateway's spans go to the API's no-op tracer, which costs a function call.
 * Imported by the gateway only, never by the CLI's start (test/cli/startup.test.ts holds --version to that).
 */
export async function startTelemetry(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Telemetry> {
  if (
    !env[OTLP_ENDPOINT_ENV] &&
    !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT &&
    !env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
  )
    return NONE;
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { OTLPMetricExporter },
    { MeterProvider, PeriodicExportingMetricReader },
    { resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
  ]);
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME ?? 'tack',
    'service.version': VERSION,
  });
  const tracer = new NodeTracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: signalUrl(env, 'TRACES', 'traces') })),
    ],
  });
  tracer.register();
  const meter = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: signalUrl(env, 'METRICS', 'metrics') }),
        exportIntervalMillis: 10_000,
      }),
    ],
  });
  metrics.setGlobalMeterProvider(meter);
  return {
    shutdown: async () => {
      await Promise.allSettled([tracer.shutdown(), meter.shutdown()]);
    },
  };
}

/**
 * A signal's URL from the given variables (the exporters would read process.env only): the per-signal endpoint
 * as given, else the base endpoint with /v1/<signal> appended, as the OTLP/HTTP specification says.
 */
function signalUrl(
  env: Readonly<Record<string, string | undefined>>,
  signal: 'TRACES' | 'METRICS',
  path: string,
): string | undefined {
  const own = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`];
  if (own) return own;
  const base = env[OTLP_ENDPOINT_ENV];
  return base ? `${base.replace(/\/+$/, '')}/v1/${path}` : undefined;
}

const tracer = () => trace.getTracer('tack', VERSION);

let instruments:
  | {
      duration: ReturnType<ReturnType<typeof metrics.getMeter>['createHistogram']>;
      calls: ReturnType<ReturnType<typeof metrics.getMeter>['createCounter']>;
    }
  | undefined;

/** Created on first use, so they bind to the meter provider startTelemetry registered. */
function meters() {
  if (!instruments) {
    const meter = metrics.getMeter('tack', VERSION);
    instruments = {
      duration: meter.createHistogram('mcp.server.operation.duration', {
        unit: 's',
        description: 'How long the gateway took to answer an MCP request, upstream call included.',
      }),
      calls: meter.createCounter('tack.gateway.calls', { description: 'Tool calls the gateway served.' }),
    };
  }
  return instruments;
}

/**
 * One span (and its metrics) per tool call the gateway serves, named and attributed after the MCP semantic
 * conventions (`tools/call <tool>`, mcp.method.name, gen_ai.tool.name, mcp.session.id). No arguments or results
 * are recorded: they may hold secrets.
 */
export async function tracedToolCall<T>(
  attributes: { tool: string; server: string; upstreamTool: string; era: string; transport: string },
  work: () => Promise<T>,
  outcomeOf: (result: T) => string,
): Promise<T> {
  const started = performance.now();
  return tracer().startActiveSpan(
    `tools/call ${attributes.tool}`,
    {
      kind: 1, // SpanKind.SERVER
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': attributes.tool,
        'tack.upstream.server': attributes.server,
        'tack.upstream.tool': attributes.upstreamTool,
        'mcp.protocol.era': attributes.era,
        'network.transport': attributes.transport === 'http' ? 'tcp' : 'pipe',
      },
    },
    async (span) => {
      let outcome = 'failed';
      try {
        const result = await work();
        outcome = outcomeOf(result);
        if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
        return result;
      } catch (error) {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: error instanceof Error ? error.name : 'error',
        });
        throw error;
      } finally {
        span.setAttribute('tack.outcome', outcome);
        const labels = {
          'mcp.method.name': 'tools/call',
          'tack.upstream.server': attributes.server,
          'tack.outcome': outcome,
        };
        meters().duration.record((performance.now() - started) / 1000, labels);
        meters().calls.add(1, labels);
        span.end();
      }
    },
  );
}
